"""The console in a real browser: Debian's headless Chromium, driven by
Selenium through Debian's chromium-driver (no browser is downloaded),
against the app served by gunicorn as the Procfile runs it.

One walk a person takes: sign in, read the overview, filter, sort, page to
the end, open a cluster, edit it into a conflict, export, watch a change
arrive live, sign out; on every page no console error (a CSP violation is
one), no critical or serious axe-core violation, nothing wider than 360 px.
The screenshots of the main pages go to docs/console/ (docs/console.md),
or, with CONSOLE_SCREENSHOTS unset, to the test's temporary folder.

CONSOLE_TEST_PORT serves on that port rather than a free one."""
import os
import pathlib
import shutil
import time

import pytest

from tests.support.served import ROOT, Gunicorn

CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TOKEN = "console-browser-admin-token"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    CHROMEDRIVER is None or CHROMIUM is None,
    reason="no chromium and chromium-driver here (scripts/test --all installs Debian's)")]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    port = int(os.environ.get("CONSOLE_TEST_PORT") or 0) or None
    log = tmp_path_factory.mktemp("console") / "gunicorn.log"
    server = Gunicorn(TOKEN, log=log, port=port)
    try:
        _seed(server)
        yield server
    finally:
        server.stop()


def _seed(server):
    org = server.request("POST", "/organizations", {"title": "Acme Payments"}).body["id"]
    for name, provider in (("eks-prod", "eks"), ("gke-edge", "gke")):
        assert server.request("POST", "/kubeplatforms", {
            "name": name, "organization": org, "control_plane": {"provider": provider},
            "infrastructure": {"cloud": {"provider": "aws" if provider == "eks" else "gcp"}},
        }).status == 201
    versions = ("1.30.6", "1.31.2", "1.32.1", "1.33.0", "1.34.1", "1.35.0")
    for number in range(24):
        body = {"name": f"cluster-{number:02}", "platform": ("eks-prod", "gke-edge")[number % 2],
                "environment": ("production", "staging", "development")[number % 3],
                "version": versions[number % len(versions)],
                "title": f"Cluster {number}", "labels": {"team": ("core", "payments")[number % 2]},
                "endpoint": f"https://api.c{number}.example.com:6443"}
        assert server.request("POST", "/kubeclusters", body).status == 201
        if number % 4:
            server.request("POST", f"/kubeclusters/cluster-{number:02}/scans",
                           {"scanned_on": 1763800000 + number * 3600})
    server.request("PATCH", "/kubeclusters/cluster-03", {"labels": {"tier": "<script>1</script>"}})
    # what a scan observed, with long API names, on cluster-01 (1.31.2): its
    # readiness details and observations must fit 360 px too
    apis = [{"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3", "resource": resource,
             "removed_release": "1.32", "requests": 1200 + n}
            for n, resource in enumerate(("flowschemas", "prioritylevelconfigurations"))]
    assert server.request("POST", "/kubeclusters/cluster-01/scans", {
        "server": {"git_version": "v1.31.2-eks-a737599"},
        "nodes": {"count": 12, "kubelet_versions": {"v1.31.2-eks-a737599": 10,
                                                     "v1.27.16-eks-a737599": 2},
                  "kube_proxy_versions": {"v1.31.2-eksbuild.2": 12},
                  "container_runtimes": {"containerd://1.7.11": 12},
                  "os_images": {"Amazon Linux 2023.6.20241121": 12}},
        "deprecated_api_requests": apis + [
            {"group": "example.com", "version": "v1beta1", "resource": f"widgetdefinitions{n}",
             "removed_release": "1.32", "requests": n} for n in range(1, 4)],
        "findings": [{"source": "pluto", "kind": "PriorityLevelConfiguration",
                      "api_version": "flowcontrol.apiserver.k8s.io/v1beta3",
                      "name": "a-rather-long-priority-level-configuration-name",
                      "namespace": "kube-system", "removed_in": "v1.32.0",
                      "replacement": "flowcontrol.apiserver.k8s.io/v1"}]}).status == 201
    assert server.request("POST", "/webhooks", {
        "url": "https://hooks.example.invalid/inventory/a/rather/long/path/for/a/narrow/screen",
        "filter": 'type="kubecluster.updated" AND subject="/kubeclusters/cluster-01"'}
    ).status == 201


def _chrome(served, downloads):
    """Debian's headless Chromium, driven through chromium-driver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.downloads = downloads
    driver.base = f"http://127.0.0.1:{served.port}"
    return driver


@pytest.fixture(scope="module")
def browser(served, tmp_path_factory):
    driver = _chrome(served, tmp_path_factory.mktemp("downloads"))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    if os.environ.get("CONSOLE_SCREENSHOTS"):
        folder = ROOT / "docs" / "console"
        folder.mkdir(exist_ok=True)
        return folder
    return pathlib.Path(tmp_path_factory.mktemp("shots"))


AXE = None


def _axe_source():
    global AXE
    if AXE is None:
        import axe_selenium_python
        AXE = (pathlib.Path(axe_selenium_python.__file__).parent / "node_modules" / "axe-core"
               / "axe.min.js").read_text()
    return AXE


def check_page(driver, title_words, status=None):
    """No console error or CSP violation, a title naming the page, no critical
    or serious axe-core violation, and nothing wider than the window.
    `status`: the page answers it on purpose (a 422 that shows a bad
    filter's error), which the browser logs as the page's own load failing."""
    assert title_words in driver.title, driver.title
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
              and not (status and entry["source"] == "network"
                       and f"status of {status} " in entry["message"])]
    assert not errors, errors
    driver.execute_script(_axe_source())
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations))"
        ".catch(e => done([{id: 'axe failed', impact: 'critical', description: String(e)}]));")
    bad = [(v["id"], v["impact"], v.get("description")) for v in result
           if v["impact"] in ("critical", "serious")]
    assert not bad, bad
    width = driver.execute_script("return [document.documentElement.scrollWidth, "
                                  "window.innerWidth]")
    assert width[0] <= width[1], width


def shoot(driver, path):
    """A screenshot of the page's top, for docs/console.md."""
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(path))


def by_label(driver, text):
    from selenium.webdriver.common.by import By
    label = driver.find_element(By.XPATH, f'//label[normalize-space()="{text}"]')
    return driver.find_element(By.ID, label.get_attribute("for"))


def link(driver, text):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.XPATH, f'//a[normalize-space()="{text}"]')


def button(driver, text):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.XPATH, f'//button[normalize-space()="{text}"]')


def rows(driver):
    from selenium.webdriver.common.by import By
    return [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "tbody th[scope=row]")]


def wait_for(condition, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_a_person_walks_the_console(browser, served, shots):
    from selenium.webdriver.common.by import By

    driver = browser
    driver.get(driver.base + "/ui/clusters")
    assert "/ui/sign-in" in driver.current_url
    check_page(driver, "Sign in")
    shoot(driver, shots / "sign-in.png")
    by_label(driver, "Token").send_keys(TOKEN)
    button(driver, "Sign in").click()
    wait_for(lambda: "/ui/clusters" in driver.current_url)

    # the overview
    link(driver, "Overview").click()
    wait_for(lambda: driver.title.startswith("Fleet overview"))
    assert driver.find_element(By.TAG_NAME, "h1").text == "Fleet overview"
    assert "Upgrade readiness" in driver.page_source
    check_page(driver, "Fleet overview")
    shoot(driver, shots / "overview.png")

    # filter, sort, page to the end
    link(driver, "Clusters").click()
    field = by_label(driver, "Filter")
    field.send_keys('environment="production"')
    field.submit()
    wait_for(lambda: "filter=" in driver.current_url)
    assert rows(driver) and all(driver.find_element(
        By.XPATH, f'//tbody/tr[th="{name}"]/td[1]').text == "production" for name in rows(driver))
    link(driver, "Version").click()
    wait_for(lambda: "order_by=version" in driver.current_url)
    driver.get(driver.current_url + "&limit=3")
    seen = rows(driver)
    while driver.find_elements(By.XPATH, '//a[normalize-space()="Next"]'):
        link(driver, "Next").click()
        seen += rows(driver)
        assert link(driver, "First")
    assert len(seen) == len(set(seen)) == 8
    check_page(driver, "Clusters")
    link(driver, "First").click()
    shoot(driver, shots / "clusters.png")

    # export the whole match: the file the API's format=csv answers
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {
        "behavior": "allow", "downloadPath": str(driver.downloads)})
    link(driver, "Export CSV").click()
    exported = wait_for(lambda: [path for path in driver.downloads.glob("*.csv")])
    wait_for(lambda: exported[0].stat().st_size > 0 and not list(
        driver.downloads.glob("*.crdownload")))
    lines = exported[0].read_text().splitlines()
    assert lines[0].startswith("id,name,platform")
    assert sorted(line.split(",")[1] for line in lines[1:]) == sorted(seen)

    # a bad filter: its error beside the field
    field = by_label(driver, "Filter")
    field.clear()
    field.send_keys('versio="1.31"')
    field.submit()
    error = wait_for(lambda: driver.find_elements(By.ID, "filter-error"))
    assert "versio" in error[0].text
    check_page(driver, "Clusters", status=422)

    # 360 px wide
    driver.set_window_size(360, 800)
    driver.get(driver.base + "/ui/clusters")
    check_page(driver, "Clusters")
    shoot(driver, shots / "clusters-360.png")
    driver.set_window_size(1280, 1000)

    # a cluster, and an edit that meets a change made meanwhile
    link(driver, "cluster-03").click()
    wait_for(lambda: driver.title.startswith("Cluster cluster-03"))
    assert "<script>1</script>" in driver.find_element(By.TAG_NAME, "main").text
    check_page(driver, "Cluster cluster-03")
    shoot(driver, shots / "cluster.png")
    link(driver, "Edit").click()
    title = by_label(driver, "Title")
    title.clear()
    title.send_keys("Mine")
    assert served.request("PATCH", "/kubeclusters/cluster-03", {"title": "Theirs"}).status == 200
    button(driver, "Save").click()
    wait_for(lambda: "changed while you edited it" in driver.page_source)
    check_page(driver, "Edit cluster cluster-03", status=412)
    shoot(driver, shots / "edit-conflict.png")
    assert served.request("GET", "/kubeclusters/cluster-03").body["title"] == "Theirs"

    # the latest changes, live
    driver.get(driver.base + "/ui/")
    wait_for(lambda: driver.title.startswith("Fleet overview"))
    time.sleep(1)  # the stream connects
    served.request("PATCH", "/kubeclusters/cluster-07", {"description": "seen live"})
    fresh = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#live-changes li.fresh"))
    assert "/kubeclusters/cluster-07" in fresh[0].text
    check_page(driver, "Fleet overview")

    # tokens, for an admin
    link(driver, "Tokens").click()
    check_page(driver, "Tokens")
    shoot(driver, shots / "tokens.png")

    # sign out: the pages are closed again
    button(driver, "Sign out").click()
    wait_for(lambda: "/ui/sign-in" in driver.current_url)
    driver.get(driver.base + "/ui/clusters")
    assert "/ui/sign-in" in driver.current_url
    check_page(driver, "Sign in")


def test_no_console_page_scrolls_sideways_at_360_px(browser, served, shots):
    """Every page of the console, as a phone shows it (360 px wide), with
    every disclosure open: nothing wider than the window (a table's own box
    may scroll, the page never), no console error, no serious axe finding."""
    from selenium.webdriver.common.by import By

    driver = browser
    driver.set_window_size(1280, 1000)
    driver.get(driver.base + "/ui/sign-in")
    if "/ui/sign-in" in driver.current_url:
        by_label(driver, "Token").send_keys(TOKEN)
        button(driver, "Sign in").click()
        wait_for(lambda: "/ui/sign-in" not in driver.current_url)
    webhook = served.request("GET", "/webhooks").body["results"][0]["id"]
    pages = {"/ui/": "Fleet overview", "/ui/clusters": "Clusters",
             "/ui/clusters?filter=" + 'environment="production"': "Clusters",
             "/ui/clusters/cluster-01": "Cluster cluster-01",
             "/ui/clusters/cluster-03": "Cluster cluster-03",
             "/ui/clusters/cluster-01/edit": "Edit cluster cluster-01",
             "/ui/platforms": "Platforms", "/ui/organizations": "Organizations",
             "/ui/changes": "Changes", "/ui/tokens": "Tokens", "/ui/webhooks": "Webhooks",
             f"/ui/webhooks/{webhook}": "Webhook", "/ui/no-such-page": "Not found"}
    driver.set_window_size(360, 800)
    try:
        for path, title in pages.items():
            driver.get(driver.base + path)
            opened = driver.execute_script(
                "const all = document.querySelectorAll('details');"
                "all.forEach(d => { d.open = true; }); return all.length")
            if path == "/ui/clusters/cluster-01":
                assert opened >= 2  # its readiness details, its scan's observations
                assert "widgetdefinitions3" in driver.find_element(By.TAG_NAME, "main").text
                _shoot_at(driver, "readiness-heading", shots / "cluster-readiness-360.png")
            if path == "/ui/":
                _shoot_at(driver, "charts-heading", shots / "overview-360.png")
            check_page(driver, title, status=404 if path == "/ui/no-such-page" else None)
            width = driver.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], (path, width)
        driver.set_window_size(1280, 1000)
        driver.get(driver.base + "/ui/clusters/cluster-01")
        driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        _shoot_at(driver, "readiness-heading", shots / "cluster-readiness.png")
        # and the page that signs in
        driver.set_window_size(360, 800)
        driver.get(driver.base + "/ui/")
        button(driver, "Sign out").click()
        wait_for(lambda: "/ui/sign-in" in driver.current_url)
        check_page(driver, "Sign in")
    finally:
        driver.set_window_size(1280, 1000)


def _shoot_at(driver, heading, path):
    """A screenshot from the heading `heading` down, for docs/console.md."""
    driver.execute_script(f"document.getElementById('{heading}').scrollIntoView()")
    driver.save_screenshot(str(path))


def test_ten_tabs_of_one_person_and_a_script_on_the_same_token_all_work(served,
                                                                        tmp_path_factory):
    """A person's console in ten tabs, each watching the overview's live
    list, and that person's script on the same token (not the bootstrap
    admin's, which no limit counts): every tab loads and goes on loading
    pages, every tab sees a change live, and every request of the script is
    answered."""
    from concurrent.futures import ThreadPoolExecutor

    from selenium.webdriver.common.by import By

    org = served.request("GET", "/organizations").body["results"][0]["id"]
    token = served.request("POST", "/tokens", {"name": "a person", "role": "writer",
                                               "organization": org}).body["token"]
    driver = _chrome(served, tmp_path_factory.mktemp("tabs"))
    driver.set_page_load_timeout(20)
    try:
        driver.get(driver.base + "/ui/sign-in")
        by_label(driver, "Token").send_keys(token)
        button(driver, "Sign in").click()
        wait_for(lambda: driver.title.startswith("Fleet overview"))
        tabs = [driver.current_window_handle]
        for _ in range(9):
            driver.switch_to.new_window("tab")
            driver.get(driver.base + "/ui/")
            wait_for(lambda: driver.title.startswith("Fleet overview"))
            tabs.append(driver.current_window_handle)

        def script(index):
            return [served.request("GET", "/kubeclusters?limit=5", token=token).status,
                    served.request("GET", f"/organizations/{org}", token=token).status,
                    served.request("PATCH", f"/kubeclusters/cluster-{index % 24:02}",
                                   {"description": f"script {index}"}, token=token).status]
        with ThreadPoolExecutor(4) as pool:  # four at once: the limit in flight
            answers = [status for statuses in pool.map(script, range(24)) for status in statuses]
        assert set(answers) == {200}, sorted(answers)

        # more pages beside the ten live lists, in an eleventh tab
        driver.switch_to.new_window("tab")
        for path, title in (("/ui/clusters", "Clusters"), ("/ui/clusters/cluster-05",
                                                            "Cluster cluster-05")):
            driver.get(driver.base + path)
            wait_for(lambda t=title: driver.title.startswith(t))
        driver.close()

        assert served.request("PATCH", "/kubeclusters/cluster-11", {"description": "seen in ten"},
                              token=token).status == 200
        for tab in tabs:
            driver.switch_to.window(tab)
            wait_for(lambda: any("/kubeclusters/cluster-11" in item.text for item in
                                 driver.find_elements(By.CSS_SELECTOR, "#live-changes li.fresh")))
            check_page(driver, "Fleet overview")

        # reloading the overview again and again locks no one out
        for tab in tabs[1:]:
            driver.switch_to.window(tab)
            driver.close()
        driver.switch_to.window(tabs[0])
        for _ in range(4):
            driver.refresh()
            wait_for(lambda: driver.title.startswith("Fleet overview"))
        assert served.request("GET", "/kubeclusters?limit=5", token=token).status == 200
        link(driver, "Clusters").click()
        wait_for(lambda: driver.title.startswith("Clusters"))
    finally:
        driver.quit()


def test_a_tab_signed_in_again_beside_an_open_one_gets_live_changes(served,
                                                                   tmp_path_factory):
    """One tab signs out while another stays open: the live list's shared
    stream ends with the session and the browser gives it up (its reconnect
    is refused). Signed in again, the tab's live list works: the shared
    worker opens a new stream rather than keep the one given up."""
    from selenium.webdriver.common.by import By

    token = served.request("POST", "/tokens", {"name": "signs out", "role": "reader"}
                           ).body["token"]
    driver = _chrome(served, tmp_path_factory.mktemp("again"))
    driver.set_page_load_timeout(20)

    def sign_in():
        driver.get(driver.base + "/ui/sign-in")
        by_label(driver, "Token").send_keys(token)
        button(driver, "Sign in").click()
        wait_for(lambda: driver.title.startswith("Fleet overview"))

    try:
        sign_in()
        staying = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(driver.base + "/ui/")
        wait_for(lambda: driver.title.startswith("Fleet overview"))
        button(driver, "Sign out").click()
        wait_for(lambda: driver.title.startswith("Sign in"))
        driver.switch_to.window(staying)
        wait_for(lambda: "stopped" in driver.find_element(By.ID, "live-status").text)
        driver.switch_to.new_window("tab")
        sign_in()
        assert served.request("PATCH", "/kubeclusters/cluster-07",
                              {"description": "heard again"}).status == 200
        wait_for(lambda: any("/kubeclusters/cluster-07" in item.text for item in
                             driver.find_elements(By.CSS_SELECTOR, "#live-changes li.fresh")))
    finally:
        driver.quit()
