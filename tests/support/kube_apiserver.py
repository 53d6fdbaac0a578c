"""A real kube-apiserver on etcd, for the tests that need the real thing
(the ClusterProfile syncer's, the agent's): built once by
scripts/kube-apiserver into .cache/ (which fails loudly without Go: these
tests fail, never skip), started on loopback in ports 9801-9803 with a CA
made by openssl, a static token file (`ADMIN_TOKEN`: system:masters),
RBAC authorization, service-account tokens (the TokenRequest API), and the
ClusterProfile CRD of sigs.k8s.io/cluster-inventory-api v0.1.0 installed.

`kube_apiserver` is a session fixture: one server for every test that
asks for it (about 7 s to start; 300 MB)."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest
import urllib3
import yaml

from tests.support.served import ROOT

ETCD_PORT, ETCD_PEER_PORT, APISERVER_PORT = 9801, 9802, 9803
ADMIN_TOKEN = "kube-admin-token-for-the-tests"


def build():
    """The directory of kube-apiserver, etcd and the CRD (scripts/kube-apiserver)."""
    done = subprocess.run([str(ROOT / "scripts" / "kube-apiserver")], capture_output=True,
                          text=True, timeout=3600)
    if done.returncode != 0:
        pytest.fail(f"scripts/kube-apiserver failed:\n{done.stderr}", pytrace=False)
    return pathlib.Path(done.stdout.strip().splitlines()[-1])


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _certificates(directory):
    """A CA, the server's certificate for 127.0.0.1 signed by it, and the
    service accounts' signing key."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test API server's certificates", pytrace=False)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.crt", "-days", "2", "-subj", "/CN=inventory-tests-ca", cwd=directory)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
             "server.csr", "-subj", "/CN=kube-apiserver", cwd=directory)
    (directory / "san.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext",
             cwd=directory)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=directory)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=directory)


class KubeApiServer:
    def __init__(self, binaries, directory):
        self.directory = directory
        self.url = f"https://127.0.0.1:{APISERVER_PORT}"
        self.ca = directory / "ca.crt"
        _certificates(directory)
        (directory / "tokens.csv").write_text(f"{ADMIN_TOKEN},admin,admin-uid,system:masters\n")
        self.etcd_log = open(directory / "etcd.log", "w")
        self.etcd = subprocess.Popen([
            str(binaries / "etcd"), "--data-dir", str(directory / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{ETCD_PORT}",
            "--advertise-client-urls", f"http://127.0.0.1:{ETCD_PORT}",
            "--listen-peer-urls", f"http://127.0.0.1:{ETCD_PEER_PORT}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{ETCD_PEER_PORT}",
            "--initial-cluster", f"default=http://127.0.0.1:{ETCD_PEER_PORT}",
            "--unsafe-no-fsync", "--log-level", "warn"],
            stdout=self.etcd_log, stderr=subprocess.STDOUT)
        self.log = open(directory / "kube-apiserver.log", "w")
        self.apiserver = subprocess.Popen([
            str(binaries / "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{ETCD_PORT}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={APISERVER_PORT}",
            f"--tls-cert-file={directory / 'server.crt'}",
            f"--tls-private-key-file={directory / 'server.key'}",
            f"--client-ca-file={self.ca}",
            f"--token-auth-file={directory / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={directory / 'sa.pub'}",
            f"--service-account-signing-key-file={directory / 'sa.key'}",
            "--service-cluster-ip-range=10.96.0.0/24",
            f"--cert-dir={directory / 'certs'}",
            "--profiling=false", "--watch-cache=false", "--v=0"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.http = urllib3.PoolManager(ca_certs=str(self.ca), retries=False,
                                        timeout=urllib3.Timeout(connect=5, read=30))
        self._wait_ready()

    def request(self, method, path, body=None, token=ADMIN_TOKEN, content_type=None):
        """(status, JSON body or text) of one request with `token`."""
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type or "application/json"
        answer = self.http.request(method, f"{self.url}{path}", body=data, headers=headers)
        text = answer.data.decode()
        try:
            return answer.status, json.loads(text)
        except ValueError:
            return answer.status, text

    def _wait_ready(self, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.apiserver.poll() is not None or self.etcd.poll() is not None:
                break
            try:
                if self.request("GET", "/readyz")[0] == 200:
                    return
            except urllib3.exceptions.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError("kube-apiserver did not become ready:\n"
                           + (self.directory / "kube-apiserver.log").read_text()[-4000:])

    def apply(self, manifest):
        """Create `manifest` (a dict of a kind the tests use), as kubectl
        create would; 409 (it exists) is fine."""
        kind, name = manifest["kind"], manifest["metadata"]["name"]
        namespace = manifest["metadata"].get("namespace")
        path = _collection(manifest["apiVersion"], kind, namespace)
        status, body = self.request("POST", path, manifest)
        if status not in (200, 201, 409):
            raise AssertionError(f"create {kind} {name}: {status} {body}")
        return body

    def install_crd(self, path):
        crd = yaml.safe_load(path.read_text())
        self.apply(crd)
        name = crd["metadata"]["name"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status, body = self.request(
                "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            conditions = {c["type"]: c["status"] for c in (body.get("status") or {}).get(
                "conditions") or []} if status == 200 else {}
            if conditions.get("Established") == "True":
                # and served: the discovery of its group lists it
                if self.request("GET", "/apis/multicluster.x-k8s.io/v1alpha1")[0] == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"the CRD {name} was not established")

    def service_account_token(self, namespace, name, seconds=3600):
        """A token of the ServiceAccount, from the TokenRequest API."""
        status, body = self.request(
            "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": seconds}})
        assert status == 201, body
        return body["status"]["token"]

    def kubeconfig(self, path, token):
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [{"name": "test", "cluster": {"server": self.url,
                                                      "certificate-authority": str(self.ca)}}],
            "users": [{"name": "test", "user": {"token": token}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}]}))
        return path

    def stop(self):
        for process in (self.apiserver, self.etcd):
            if process.poll() is None:
                process.terminate()
        for process in (self.apiserver, self.etcd):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.log.close()
        self.etcd_log.close()


_PLURALS = {"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "Role": "roles",
            "RoleBinding": "rolebindings", "ClusterRole": "clusterroles",
            "ClusterRoleBinding": "clusterrolebindings", "Node": "nodes",
            "DaemonSet": "daemonsets", "ClusterProfile": "clusterprofiles",
            "CustomResourceDefinition": "customresourcedefinitions", "Deployment": "deployments"}


def _collection(api_version, kind, namespace):
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"{base}{where}/{_PLURALS[kind]}"


@pytest.fixture(scope="session")
def kube_apiserver():
    binaries = build()
    directory = pathlib.Path(tempfile.mkdtemp(prefix="kube-apiserver-"))
    server = KubeApiServer(binaries, directory)
    try:
        server.install_crd(binaries / "clusterprofiles-crd-v0.1.0.yaml")
        yield server
    finally:
        server.stop()
        if not os.environ.get("KEEP_KUBE_APISERVER_DIR"):
            shutil.rmtree(directory, ignore_errors=True)
