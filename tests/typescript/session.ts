// The README's example session, as a strictly typed client runs it: types
// generated from the service's /openapi.json by openapi-typescript (into
// schema.d.ts, at test time), calls made with openapi-fetch. It must compile
// under `tsc --strict` with no casts and no non-null assertions: every field
// the server always sends is required in its answer types, bodies are
// optional exactly when the service takes none.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

const [baseUrl = "", token = ""] = process.argv.slice(2);
// A list answers JSON or, asked for it, CSV (format=csv): the client says
// which media it reads, JSON and problem+json, so a page types as JSON.
const client = createClient<paths, `application/${string}json`>({
  baseUrl, headers: { Authorization: `Bearer ${token}` } });

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

async function main(): Promise<void> {
  const org = await client.POST("/organizations", { body: { title: "Acme Corp" } });
  if (org.data === undefined) throw new Error(`create organization: ${org.response.status}`);
  const orgId: string = org.data.id;

  const platform = await client.POST("/kubeplatforms", {
    body: {
      name: "eks-prod", organization: orgId, title: "EKS production",
      control_plane: { provider: "eks" }, infrastructure: { cloud: { provider: "aws" } },
    },
  });
  if (platform.data === undefined) throw new Error(`create platform: ${platform.response.status}`);
  check(platform.data.organization === orgId, "the platform's organization");

  const payments = await client.POST("/kubeclusters", {
    body: {
      name: "payments", platform: "eks-prod", environment: "production",
      version: "v1.31.2-eks-1234", labels: { team: "core" },
    },
  });
  if (payments.data === undefined) throw new Error(`create cluster: ${payments.response.status}`);
  const createdOn: string = payments.data.created_on;
  const lastScan: number | null = payments.data.last_scanned_on;
  check(createdOn.endsWith("Z") && lastScan === null, "a new cluster's read-only fields");
  const ledger = await client.POST("/kubeclusters", {
    body: { name: "ledger", platform: "eks-prod", environment: "staging", version: "1.29.4" },
  });
  check(ledger.response.status === 201, "create ledger");

  // a scanner records scans: with a time, and with no body at all (now)
  const path = { path: { cluster: "payments" } };
  const first = await client.POST("/kubeclusters/{cluster}/scans", {
    params: path, body: { scanned_on: 1763800000 },
  });
  if (first.data === undefined) throw new Error(`record scan: ${first.response.status}`);
  const scannedOn: number = first.data.scanned_on;
  check(scannedOn === 1763800000, "scanned_on");
  const now = await client.POST("/kubeclusters/{cluster}/scans", { params: path });
  check(now.response.status === 201, "record a scan with no body");

  // page through a list: pass pagination.continue back until it is ""
  const names: string[] = [];
  let next = "";
  do {
    const page = await client.GET("/kubeclusters", {
      params: { query: next === "" ? { limit: 1 } : { limit: 1, continue: next } },
    });
    if (page.data === undefined) throw new Error(`list clusters: ${page.response.status}`);
    names.push(...page.data.results.map((cluster) => cluster.name));
    next = page.data.pagination.continue;
  } while (next !== "");
  check(names.join(",") === "ledger,payments", `walked ${names.join(",")}`);

  const due = await client.GET("/kubeclusters", {
    params: { query: { filter: 'environment="production" AND version<"1.32"' } },
  });
  if (due.data === undefined) throw new Error(`filter clusters: ${due.response.status}`);
  check(due.data.results.length === 1, "the filtered list");
  // the fleet: today's support of each cluster, and a summary, typed
  const [dueCluster] = due.data.results;
  if (dueCluster === undefined) throw new Error("no cluster due");
  const support: "supported" | "ending" | "extended" | "unsupported" | "unknown" =
    dueCluster.support.status;
  const endsOn: string | null = dueCluster.support.ends_on;
  check(dueCluster.support.lifecycle.distribution === "eks", `support ${support} ${endsOn}`);
  const ending = await client.GET("/kubeclusters", {
    params: { query: { filter: 'environment="production" AND support.status="ending"',
                       order_by: "version" } },
  });
  check(ending.response.status === 200, "clusters leaving support");
  const summary = await client.GET("/kubeclusters:summary", {
    params: { query: { group_by: "environment,version,support.status" } },
  });
  if (summary.data === undefined) throw new Error(`summary: ${summary.response.status}`);
  const total: number = summary.data.total;
  const counted = summary.data.groups.reduce((sum, group) => sum + group.count, 0);
  const [largest] = summary.data.groups;
  if (largest === undefined) throw new Error("no group");
  const minor: string | null | undefined = largest.key.version;
  check(total === 2 && counted === 2 && minor !== undefined, "the summary's counts");
  // upgrade readiness, typed: never scanned, so every check is unknown; the fleet's blockers
  const readiness: "passing" | "warning" | "unknown" | "error" = dueCluster.readiness.status;
  check(readiness === "unknown" && dueCluster.readiness.checks.length === 4 &&
        dueCluster.observed === null, "readiness before it is observed");
  const blockers = await client.GET("/kubeclusters:blockers", {
    params: { query: { filter: 'environment="production"' } },
  });
  if (blockers.data === undefined) throw new Error(`blockers: ${blockers.response.status}`);
  check(blockers.data.total === 1 && blockers.data.blockers.length === 0, "no blockers yet");

  const scans = await client.GET("/kubeclusters/{cluster}/scans", { params: path });
  if (scans.data === undefined) throw new Error(`list scans: ${scans.response.status}`);
  check(scans.data.results.every((scan) => scan.cluster === payments.data.id), "scans' cluster");

  // an upgrade wave to 1.32: a canary stage of no cluster completes at
  // once, so production's turn comes, held for an approval. A stage's soak
  // and approval have defaults, which openapi-typescript 7 (its
  // defaultNonNullable) types as required, in a body too: they are given.
  const made = await client.POST("/rollouts", {
    body: {
      name: "wave", target: "1.32", stages: [
        { name: "canary", filter: 'labels.team="nobody"', soak: "PT0S", approval: false },
        { name: "production", filter: 'environment="production"', soak: "PT0S",
          approval: true },
      ],
    },
  });
  if (made.data === undefined) throw new Error(`create rollout: ${made.response.status}`);
  check(made.data.status.stages.map((stage) => stage.state).join(",") === "complete,held",
    "the rollout's stages at creation");
  const wave = await client.GET("/rollouts/{rollout}", { params: { path: { rollout: "wave" } } });
  if (wave.data === undefined) throw new Error(`read rollout: ${wave.response.status}`);
  const [, production] = wave.data.status.stages;
  if (production === undefined) throw new Error("no production stage");
  const state: "waiting" | "held" | "open" | "soaking" | "complete" = production.state;
  const blocked: number = production.blocked;
  check(state === "held" && production.clusters === 1 && blocked === 1, "production's counts");
  const members = await client.GET("/rollouts/{rollout}/clusters", {
    params: { path: { rollout: "wave" }, query: { filter: 'stage="production"' } },
  });
  if (members.data === undefined) throw new Error(`rollout clusters: ${members.response.status}`);
  const memberState: "done" | "ready" | "blocked" | "behind" | undefined =
    members.data.results[0]?.state;
  check(members.data.results.length === 1 && members.data.results[0]?.cluster === "payments" &&
        memberState === "blocked", "production's clusters");
  const approved = await client.POST("/rollouts/{rollout}:approve", {
    params: { path: { rollout: "wave" } }, body: { stage: "production" },
  });
  if (approved.data === undefined) throw new Error(`approve: ${approved.response.status}`);
  const approvedBy: string | null | undefined = approved.data.status.stages[1]?.approved_by;
  check(approved.data.status.stages[1]?.state === "open" && approvedBy === "admin",
    "production approved and open");

  const changed = await client.PATCH("/kubeclusters/{cluster}", {
    params: path, body: { version: "1.32.0", labels: { team: null, owner: "ops" } },
  });
  if (changed.data === undefined) throw new Error(`patch cluster: ${changed.response.status}`);
  check(changed.data.labels["owner"] === "ops" && !("team" in changed.data.labels), "labels");

  // the fleet's tools: an endpoint, Argo CD's generator, Prometheus' discovery, a webhook
  const withEndpoint = await client.PATCH("/kubeclusters/{cluster}", {
    params: path, body: { endpoint: "https://api.payments.example.com:6443" },
  });
  if (withEndpoint.data === undefined) throw new Error(`endpoint: ${withEndpoint.response.status}`);
  const endpoint: string | null = withEndpoint.data.endpoint;
  check(endpoint === "https://api.payments.example.com:6443", "the endpoint");
  const generator = await client.POST("/integrations/argocd/api/v1/getparams.execute", {
    body: { applicationSetName: "fleet", input: { parameters: { filter: 'name="payments"' } } },
  });
  if (generator.data === undefined) throw new Error(`argocd: ${generator.response.status}`);
  const server: string | null | undefined = generator.data.output.parameters[0]?.server;
  check(server === endpoint, "Argo CD's server");
  const targets = await client.GET("/integrations/prometheus/targets", {});
  if (targets.data === undefined) throw new Error(`prometheus: ${targets.response.status}`);
  check(targets.data.some((group) => group.targets.includes("api.payments.example.com:6443")),
    "a Prometheus target");
  const hook = await client.POST("/webhooks", {
    body: { url: "https://hooks.example.invalid/inventory", filter: 'type="kubecluster.*"' },
  });
  if (hook.data === undefined) throw new Error(`webhook: ${hook.response.status}`);
  const secret: string = hook.data.secret;
  check(secret.startsWith("whsec_"), "a webhook's secret");
  const deliveries = await client.GET("/webhooks/{webhook}/deliveries", {
    params: { path: { webhook: hook.data.id } },
  });
  check(deliveries.data !== undefined && deliveries.data.results.length === 0, "no delivery yet");

  const gone = await client.DELETE("/kubeclusters/{cluster}", { params: path });
  check(gone.response.status === 204, "delete cluster");
  const all = await client.DELETE("/organizations/{org}", {
    params: { path: { org: orgId }, query: { force: true } },
  });
  check(all.response.status === 204, "delete organization");
  const missing = await client.GET("/kubeplatforms/{platform}", {
    params: { path: { platform: "eks-prod" } },
  });
  if (missing.error === undefined) throw new Error("the platform should be gone");
  check(missing.error.status === 404 && missing.error.errors.length === 0, "a 404 problem");
}

main().then(
  () => console.log("the README's session ran"),
  (error: unknown) => { console.error(error); process.exit(1); },
);
