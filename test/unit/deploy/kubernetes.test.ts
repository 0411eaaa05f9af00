import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { loadConfig, type ProcessRole } from '../../../src/config.ts';
import { documentedSettings, mainArgumentProblem, SHUTDOWN_DRAIN_SECONDS } from '../../helpers/deploy/app-facts.ts';
import { readImage } from '../../helpers/deploy/dockerfile.ts';
import { kubernetesProblems, loadKubernetesDocuments } from '../../helpers/deploy/kubernetes.ts';
import { readRepoFile, ROOT } from '../../helpers/deploy/repo-files.ts';

const K8S = 'deploy/k8s';
const manifestFiles = readdirSync(path.join(ROOT, K8S)).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
const documents = loadKubernetesDocuments(manifestFiles.map((file) => `${K8S}/${file}`));
const manifests = documents.map((document) => document.manifest);
const image = readImage(readRepoFile('Dockerfile'));
const packageJson = JSON.parse(readRepoFile('package.json'));

const ofKind = (kind: string) => manifests.filter((manifest) => manifest.kind === kind);
const named = (kind: string, name: string) => ofKind(kind).find((manifest) => manifest.metadata.name === name)!;
const gateway = named('Deployment', 'agentgate-gateway');
const worker = named('Deployment', 'agentgate-worker');
/** Every pod template: the Deployments' and the migration Job's. */
const workloads = [...ofKind('Deployment'), ...ofKind('Job')];
const containerOf = (workload: any) => workload.spec.template.spec.containers[0];
const roleOf = (workload: any): ProcessRole => containerOf(workload).args[2];
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** What a container sees: the image's ENV, then its ConfigMaps and Secrets in order (the example Secret's values). */
function containerEnv(container: any): Record<string, string> {
  const sources = container.envFrom.map((source: any) => source.configMapRef
    ? named('ConfigMap', source.configMapRef.name).data
    : named('Secret', source.secretRef.name).stringData);
  return Object.assign({ ...image.env }, ...sources);
}

describe('deploy/k8s', () => {
  it('every manifest is valid against the Kubernetes API schemas, unknown fields included', () => {
    assert.ok(documents.length >= 7, `${documents.length} documents`);
    assert.deepEqual(kubernetesProblems(documents), []);
  });

  it('a copy with a misspelt probe field, a wrong type or an unknown kind is refused', () => {
    const broken = structuredClone(documents);
    const deployment = broken.find((document) => document.manifest.metadata.name === 'agentgate-gateway')!;
    containerOf(deployment.manifest).readinessProbe.periodSecond = 5;
    const service = broken.find((document) => document.manifest.kind === 'Service')!;
    service.manifest.spec.ports[0].port = 'eighty';
    const budget = broken.find((document) => document.manifest.kind === 'PodDisruptionBudget')!;
    budget.manifest.apiVersion = 'policy/v1beta1';
    const problems = kubernetesProblems(broken);
    assert.ok(problems.some((problem) => problem.includes('agentgate-gateway') && problem.includes('periodSecond')), problems.join('\n'));
    assert.ok(problems.some((problem) => problem.includes('Service agentgate') && problem.includes('ports/0/port must be integer')), problems.join('\n'));
    assert.ok(problems.some((problem) => problem.includes('no schema for policy/v1beta1 PodDisruptionBudget')), problems.join('\n'));
  });

  it('names no namespace, so the manifests go wherever they are applied', () => {
    for (const manifest of manifests) assert.equal(manifest.metadata.namespace, undefined, manifest.metadata.name);
  });

  it('kustomization.yaml applies every manifest but the example Secret and the one-off migration Job', () => {
    const kustomization = parse(readRepoFile(`${K8S}/kustomization.yaml`));
    assert.deepEqual([...kustomization.resources].sort(), manifestFiles.filter((file) => !['secret.example.yaml', 'migrate-job.yaml'].includes(file)).sort());
  });

  it('runs gateways and workers with the roles main.ts knows, and the Job runs the migration', () => {
    assert.deepEqual(containerOf(gateway).args, ['serve', '--role', 'gateway']);
    assert.deepEqual(containerOf(worker).args, ['serve', '--role', 'worker']);
    assert.deepEqual(containerOf(named('Job', 'agentgate-migrate')).args, ['migrate']);
    for (const workload of workloads) assert.equal(mainArgumentProblem(containerOf(workload).args), undefined, workload.metadata.name);
  });

  it('every container runs this version\'s image as its non-root user, with a read-only root filesystem', () => {
    const [uid, gid] = image.user.split(':').map(Number);
    for (const workload of workloads) {
      const pod = workload.spec.template.spec;
      const container = containerOf(workload);
      assert.equal(container.image, `agentgate:${packageJson.version}`, workload.metadata.name);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.deepEqual([pod.securityContext.runAsUser, pod.securityContext.runAsGroup], [uid, gid], 'the Dockerfile\'s USER');
      assert.equal(container.securityContext.readOnlyRootFilesystem, true);
      assert.equal(container.securityContext.allowPrivilegeEscalation, false);
      assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
    }
  });

  it('gives every container settings that pass the production checks, with only documented variables', () => {
    const settingNames = documentedSettings();
    for (const variable of [...Object.keys(named('ConfigMap', 'agentgate-settings').data), ...Object.keys(named('Secret', 'agentgate-secrets').stringData)]) {
      assert.ok(settingNames.has(variable), `${variable} is a documented setting`);
    }
    for (const workload of workloads) {
      const config = loadConfig(containerEnv(containerOf(workload)), workload.kind === 'Job' ? 'all' : roleOf(workload));
      assert.equal(config.environment, 'production', workload.metadata.name);
      assert.ok(config.databaseUrl, `${workload.metadata.name} uses an external PostgreSQL (the image has no embedded one)`);
    }
  });

  it('gives no two pods the same engine identity: EXECUTOR_ID is left to each pod\'s default', () => {
    for (const workload of workloads) {
      const container = containerOf(workload);
      assert.equal(containerEnv(container).EXECUTOR_ID, undefined, workload.metadata.name);
      assert.equal(container.env, undefined, `${workload.metadata.name} takes its settings from the ConfigMap and the Secret only`);
    }
  });

  it('each Deployment selects its own pods, and each disruption budget and the Service select one Deployment\'s', () => {
    for (const deployment of ofKind('Deployment')) {
      assert.ok(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels), deployment.metadata.name);
    }
    const selectedBy = (selector: Record<string, string>) => workloads.filter((workload) => selects(selector, workload.spec.template.metadata.labels));
    assert.deepEqual(selectedBy(named('PodDisruptionBudget', 'agentgate-gateway').spec.selector.matchLabels), [gateway]);
    assert.deepEqual(selectedBy(named('PodDisruptionBudget', 'agentgate-worker').spec.selector.matchLabels), [worker]);
    assert.deepEqual(selectedBy(named('Service', 'agentgate').spec.selector), [gateway]);
  });

  it('probes gateways and workers on the port they listen on: /health for start-up and liveness, /readiness for traffic', () => {
    for (const [deployment, role] of [[gateway, 'gateway'], [worker, 'worker']] as const) {
      const container = containerOf(deployment);
      const listening = loadConfig(containerEnv(container), role).port;
      const portNamed = (name: string) => container.ports.find((port: any) => port.name === name)?.containerPort;
      if (role === 'gateway') assert.equal(portNamed(named('Service', 'agentgate').spec.ports[0].targetPort), listening, 'the Service targets the server');
      const probes = { startupProbe: '/health', livenessProbe: '/health', readinessProbe: '/readiness' } as const;
      for (const [probe, probePath] of Object.entries(probes)) {
        assert.equal(container[probe].httpGet.path, probePath, `${role} ${probe}`);
        assert.equal(portNamed(container[probe].httpGet.port), listening, `${role} ${probe} reaches the server's port`);
      }
    }
  });

  it('lets a stopping pod finish its preStop pause and its drain before it is killed', () => {
    for (const deployment of ofKind('Deployment')) {
      const pod = deployment.spec.template.spec;
      const pause = containerOf(deployment).lifecycle?.preStop?.sleep?.seconds ?? 0;
      assert.ok(pod.terminationGracePeriodSeconds > pause + SHUTDOWN_DRAIN_SECONDS, deployment.metadata.name);
    }
  });

  it('rolls out without losing capacity, and lets disruptions take one pod at a time', () => {
    for (const deployment of ofKind('Deployment')) {
      assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0, deployment.metadata.name);
      assert.ok(deployment.spec.replicas >= 2, 'a budget of one unavailable pod needs a second one');
    }
    for (const budget of ofKind('PodDisruptionBudget')) assert.equal(budget.spec.maxUnavailable, 1, budget.metadata.name);
  });
});
