/**
 * The container build (Dockerfile) and the Kubernetes example (deploy/kubernetes/codexd.yaml)
 * against the daemon itself: the probes ask a route that exists, is public and answers 200 with
 * the Host they send; every port is the configured one; the preStop drain and codexd's own
 * graceful stop fit in the grace period; both configurations pass the daemon's config schema.
 * (No image is built here: there is no container engine.)
 */
import { describe, expect, test } from "bun:test";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { createApp } from "../src/daemon/app.ts";
import { type ConfigFile, DEFAULT_PORT, readConfigFile } from "../src/daemon/config.ts";
import { SHUTDOWN_DEADLINE_MS } from "../src/daemon/daemon.ts";
import { FakeService } from "./daemon/fake-service.ts";
import { REPO_ROOT } from "./support/codex-harness.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const dockerfile = await readFile(path.join(REPO_ROOT, "Dockerfile"), "utf8");
const manifests = parseAllDocuments(
  await readFile(path.join(REPO_ROOT, "deploy/kubernetes/codexd.yaml"), "utf8"),
).map((doc) => {
  expect(doc.errors).toEqual([]);
  return doc.toJS() as Json;
});
const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const statefulSet = byKind("StatefulSet")[0];
const pod = statefulSet.spec.template.spec as Json;
const container = pod.containers[0] as Json;

async function validConfig(text: string): Promise<ConfigFile> {
  const dir = await mkdtemp(path.join(tmpdir(), "codexd-deploy-"));
  try {
    const file = path.join(dir, "codexd.jsonc");
    await writeFile(file, text);
    return readConfigFile(file); // throws with file:line:column on anything the daemon refuses
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const k8sConfig = await validConfig(byKind("ConfigMap")[0].data["codexd.jsonc"]);
const imageConfig = await validConfig(
  await readFile(path.join(REPO_ROOT, "deploy/docker/codexd.jsonc"), "utf8"),
);

/** The container port a probe or Service names (by name or number). */
function containerPort(port: string | number): number {
  if (typeof port === "number") return port;
  const found = (container.ports as Json[]).find((p) => p.name === port);
  expect(found).toBeDefined();
  return found!.containerPort;
}

describe("Kubernetes example", () => {
  test("every port is the configured one, and the default", () => {
    expect(k8sConfig.server?.port).toBe(DEFAULT_PORT);
    expect(imageConfig.server?.port).toBe(DEFAULT_PORT);
    for (const p of container.ports as Json[]) expect(p.containerPort).toBe(DEFAULT_PORT);
    for (const service of byKind("Service")) {
      for (const p of service.spec.ports as Json[]) {
        expect(containerPort(p.targetPort)).toBe(DEFAULT_PORT);
      }
      expect(service.spec.selector).toEqual(statefulSet.spec.template.metadata.labels);
    }
  });

  test("the probes ask a real, public route with a Host the daemon serves, over TLS", async () => {
    const app = createApp({
      service: new FakeService(),
      token: "t".repeat(32),
      listen: () => ({ hostname: "0.0.0.0", port: DEFAULT_PORT, tls: true, extraHosts: [] }),
    });
    const openapi = await (await app.request("/v1/openapi.json", {
      headers: { authorization: `Bearer ${"t".repeat(32)}`, host: `localhost:${DEFAULT_PORT}` },
    })).json() as Json;
    for (const probe of [container.readinessProbe, container.livenessProbe] as Json[]) {
      const get = probe.httpGet as Json;
      expect(containerPort(get.port)).toBe(k8sConfig.server!.port!);
      expect(get.scheme).toBe(k8sConfig.server?.tls ? "HTTPS" : "HTTP");
      expect(openapi.paths[get.path]?.get?.security).toEqual([]); // needs no token
      const host = (get.httpHeaders as Json[]).find((h) => h.name === "Host")!.value;
      const answer = await app.request(`https://${host}${get.path}`, { headers: { host } });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ status: expect.any(String) });
    }
  });

  test("the container runs the image's binary with the mounted config, state on the volume", () => {
    const [, flag, configPath] = container.args as string[];
    expect(container.args[0]).toBe("serve");
    expect(flag).toBe("--config");
    const mounts = container.volumeMounts as Json[];
    const configMount = mounts.find((m) => m.name === "config")!;
    expect(path.dirname(configPath)).toBe(configMount.mountPath);
    const stateMount = mounts.find((m) => m.name === "state")!.mountPath as string;
    for (const dir of [k8sConfig.stateDir!, k8sConfig.codex!.home!]) {
      expect(dir.startsWith(`${stateMount}/`)).toBe(true);
    }
    const tlsMount = mounts.find((m) => m.name === "tls")!.mountPath as string;
    expect(path.dirname(k8sConfig.server!.tls!.cert)).toBe(tlsMount);
    expect(statefulSet.spec.volumeClaimTemplates[0].metadata.name).toBe("state");
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(container.resources.limits).toMatchObject({
      cpu: expect.anything(),
      memory: expect.anything(),
    });
    expect(container.resources.requests).toBeDefined();
  });

  test("preStop drains, then SIGTERM stops codexd, all within the grace period", async () => {
    const [program, script] = container.lifecycle.preStop.exec.command as string[];
    expect(program).toBe("node");
    expect(dockerfile).toContain(`COPY deploy/docker/prestop-drain.mjs ${script}`);
    const source = await readFile(path.join(REPO_ROOT, "deploy/docker/prestop-drain.mjs"), "utf8");
    // The hook's defaults are the daemon's: its port, its token file, the sessions route.
    expect(source).toContain(`CODEXD_PORT ?? "${DEFAULT_PORT}"`);
    expect(source).toContain(`"${k8sConfig.stateDir}/token"`);
    expect(source).toContain(`get("/v1/sessions"`);
    const drain = Number(
      (container.env as Json[]).find((e) => e.name === "CODEXD_DRAIN_SECONDS")!.value,
    );
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drain + SHUTDOWN_DEADLINE_MS / 1000);
  });
});

describe("Dockerfile", () => {
  test("builds with npm ci and npm run build, codex from the npm registry, runs as non-root", () => {
    expect(dockerfile).toMatch(/^FROM node:\S+ AS build$/m);
    expect(dockerfile).toMatch(/^RUN npm ci$/m);
    expect(dockerfile).toMatch(/^RUN npm run build/m);
    expect(dockerfile).toContain('npm install -g "@openai/codex@');
    expect(dockerfile).toMatch(/^USER 10001:10001$/m);
    expect(pod.securityContext.runAsUser).toBe(10001);
  });

  test("the compiled binary is the entrypoint; its port, volume and config agree", () => {
    expect(dockerfile).toContain("COPY --from=build /src/dist/codexd /usr/local/bin/codexd");
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/local\/bin\/codexd"\]$/m);
    expect(dockerfile).toMatch(
      /^CMD \["serve", "--config", "\/etc\/codexd\/codexd.jsonc"\]$/m,
    );
    expect(dockerfile).toContain("COPY deploy/docker/codexd.jsonc /etc/codexd/codexd.jsonc");
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${DEFAULT_PORT}$`, "m"));
    const volume = /^VOLUME \["([^"]+)"\]$/m.exec(dockerfile)![1];
    for (const dir of [imageConfig.stateDir!, imageConfig.codex!.home!]) {
      expect(dir.startsWith(`${volume}/`)).toBe(true);
    }
    expect(imageConfig.policies?.dir).toBe("/etc/codexd/policies");
    expect(dockerfile).toContain("COPY policies /etc/codexd/policies");
  });
});
