import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv } from 'ajv';
import { DockerfileParser, type Instruction, type JSONInstruction } from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export function readRepoFile(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

/** Every problem the Dockerfile parser of Docker's language server finds (syntax, instructions, flags). */
export function dockerfileProblems(text: string): string[] {
  return lintDockerfile(text).map((diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`);
}

/** What the Dockerfile's final stage (the image that runs) says, with build arguments at their defaults. */
export interface ImageFacts {
  baseImages: string[];
  user: string;
  exposedPorts: string[];
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  healthcheck: string[];
  /** The paths COPY takes from the build context (not from another stage). */
  copiedFromContext: string[];
}

export function readImage(text: string): ImageFacts {
  const dockerfile = DockerfileParser.parse(text);
  const final = dockerfile.getFROMs().at(-1)!.getRange().start.line;
  const inFinalStage = (instruction: Instruction) => instruction.getRange().start.line >= final;
  const last = (keyword: string) => dockerfile.getInstructions().filter((instruction) => instruction.getKeyword() === keyword && inFinalStage(instruction)).at(-1);
  const exec = (instruction: Instruction | undefined) => (instruction as JSONInstruction | undefined)?.getJSONStrings().map((argument) => argument.getJSONValue()) ?? [];
  const healthcheck = last('HEALTHCHECK')?.getRawArgumentsContent() ?? '';
  return {
    baseImages: dockerfile.getFROMs().map((from) => from.getExpandedArguments()[0].getValue()),
    user: last('USER')?.getArgumentsContent() ?? 'root',
    exposedPorts: dockerfile.getInstructions().filter((instruction) => instruction.getKeyword() === 'EXPOSE' && inFinalStage(instruction))
      .flatMap((instruction) => instruction.getArguments().map((argument) => argument.getValue())),
    env: Object.fromEntries(dockerfile.getENVs().filter(inFinalStage).flatMap((env) => env.getProperties().map((property) => [property.getName(), property.getValue() ?? '']))),
    entrypoint: exec(last('ENTRYPOINT')),
    cmd: exec(last('CMD')),
    healthcheck: healthcheck.includes('CMD') ? JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD') + 3)) : [],
    copiedFromContext: dockerfile.getCOPYs().filter((copy) => !copy.getFromFlag())
      .flatMap((copy) => copy.getArguments().slice(0, -1).map((argument) => argument.getValue())),
  };
}

/** A Compose file as Compose reads it: YAML 1.1 merge keys (`<<: *anchor`) resolved, duplicate keys refused. */
export function parseCompose(text: string): any {
  return parse(text, { merge: true });
}

let composeValidator: ReturnType<Ajv['compile']> | undefined;

/** Problems against the Compose Specification's JSON schema (vendored in deploy/schemas/, see its README). */
export function composeProblems(compose: unknown): string[] {
  composeValidator ??= compileComposeSchema();
  if (composeValidator(compose)) return [];
  return (composeValidator.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
}

function compileComposeSchema(): ReturnType<Ajv['compile']> {
  const schema = JSON.parse(readRepoFile('deploy/schemas/compose-spec.json'));
  // The upstream schema names draft-07 by its https address, which ajv knows under http; its loose types are upstream's.
  const draft7 = createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json');
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
  ajv.addMetaSchema({ ...draft7, $id: schema.$schema });
  return ajv.compile(schema);
}

export interface KubernetesDocument {
  file: string;
  index: number;
  manifest: any;
}

/** The documents of the YAML files, in order; a YAML error (duplicate key, bad indentation) throws. */
export function loadKubernetesDocuments(files: string[]): KubernetesDocument[] {
  return files.flatMap((file) => parseAllDocuments(readRepoFile(file)).map((document, index) => {
    if (document.errors.length > 0) throw new Error(`${file} document ${index + 1}: ${document.errors.map((error) => error.message).join('; ')}`);
    return { file, index, manifest: document.toJS() };
  }));
}

interface KindSchema {
  model: new (data: any) => { validate(): void };
  /** Where kubernetes-models declares the kind's TypeScript type, and its name. */
  typeModule: string;
  typeName: string;
}

/** The kinds the manifests use; any other kind is refused rather than passed unchecked. */
const KINDS: Record<string, KindSchema> = {
  'v1/ConfigMap': { model: ConfigMap, typeModule: 'kubernetes-models/v1/ConfigMap', typeName: 'IConfigMap' },
  'v1/Secret': { model: Secret, typeModule: 'kubernetes-models/v1/Secret', typeName: 'ISecret' },
  'v1/Service': { model: Service, typeModule: 'kubernetes-models/v1/Service', typeName: 'IService' },
  'apps/v1/Deployment': { model: Deployment, typeModule: 'kubernetes-models/apps/v1/Deployment', typeName: 'IDeployment' },
  'policy/v1/PodDisruptionBudget': { model: PodDisruptionBudget, typeModule: 'kubernetes-models/policy/v1/PodDisruptionBudget', typeName: 'IPodDisruptionBudget' },
  'batch/v1/Job': { model: Job, typeModule: 'kubernetes-models/batch/v1/Job', typeName: 'IJob' },
};

/**
 * Problems against the Kubernetes API schemas, in two passes. kubernetes-models validates each document
 * with the JSON schemas generated from Kubernetes' OpenAPI document (types, required fields, formats),
 * but like the API schemas themselves it lets unknown fields through, which a cluster's strict field
 * validation refuses (a misspelt probe field would silently disable the probe). So the documents are also
 * type-checked against the TypeScript types generated from the same document: an object literal with a
 * property its type does not declare is an error there.
 */
export function kubernetesProblems(documents: KubernetesDocument[]): string[] {
  const problems: string[] = [];
  const known: KubernetesDocument[] = [];
  for (const document of documents) {
    const kind = KINDS[`${document.manifest?.apiVersion}/${document.manifest?.kind}`];
    if (!kind) {
      problems.push(`${describe(document)}: no schema for ${document.manifest?.apiVersion} ${document.manifest?.kind}`);
      continue;
    }
    known.push(document);
    try {
      new kind.model(document.manifest).validate();
    } catch (error) {
      problems.push(`${describe(document)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return [...problems, ...unknownFieldProblems(known)];
}

function describe(document: KubernetesDocument): string {
  return `${document.file} document ${document.index + 1} (${document.manifest?.kind} ${document.manifest?.metadata?.name})`;
}

function unknownFieldProblems(documents: KubernetesDocument[]): string[] {
  const fileName = path.join(ROOT, 'deploy', 'manifest-type-check.ts');
  const declarations = documents.map((document, index) => {
    const kind = KINDS[`${document.manifest.apiVersion}/${document.manifest.kind}`];
    return `import type { ${kind.typeName} as Kind${index} } from '${kind.typeModule}';\n` +
      `export const document${index}: Kind${index} = ${JSON.stringify(document.manifest, null, 2)};\n`;
  });
  const program = typeCheckProgram(fileName, declarations.join(''));
  const sourceFile = program.getSourceFile(fileName)!;
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (diagnostic.file !== sourceFile || diagnostic.start === undefined) return message;
    const documentIndex = declarationIndexAt(sourceFile, diagnostic.start);
    return `${describe(documents[documentIndex])}: ${message}`;
  });
}

/** A program of one in-memory module (never written to disk) beside the repository's node_modules. */
function typeCheckProgram(fileName: string, source: string): ts.Program {
  const options: ts.CompilerOptions = {
    strict: true, noEmit: true, skipLibCheck: true, types: [],
    target: ts.ScriptTarget.ES2024, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile } = host;
  host.fileExists = (name) => name === fileName || fileExists(name);
  host.readFile = (name) => (name === fileName ? source : readFile(name));
  return ts.createProgram([fileName], options, host);
}

function declarationIndexAt(sourceFile: ts.SourceFile, position: number): number {
  const statements = sourceFile.statements.filter(ts.isVariableStatement);
  return statements.findIndex((statement) => position >= statement.pos && position < statement.end);
}

/**
 * How long a process drains after SIGTERM: SHUTDOWN_GRACE_SECONDS' default (issue 17). Grace periods in the
 * manifests must exceed it; read it from loadConfig once it is a setting.
 */
export const SHUTDOWN_DRAIN_SECONDS = 25;

/** Arguments after `node src/main.ts` that main.ts accepts for a long-running or one-shot container. */
export function mainArgumentProblem(args: string[]): string | undefined {
  const [command, ...rest] = args;
  if (command === 'migrate') return rest.length === 0 ? undefined : `migrate takes no arguments, got ${rest.join(' ')}`;
  if (command !== 'serve') return `unknown command ${command}`;
  if (rest.length === 0) return undefined;
  if (rest.length !== 2 || rest[0] !== '--role') return `serve takes only --role <role>, got ${rest.join(' ')}`;
  return ['all', 'gateway', 'worker'].includes(rest[1]) ? undefined : `unknown role ${rest[1]}`;
}

/** The settings README's "Settings" table documents (src/config.ts reads each of them). */
export function documentedSettings(): Set<string> {
  const readme = readRepoFile('README.md');
  const table = readme.slice(readme.indexOf('## Settings'), readme.indexOf('\n## ', readme.indexOf('## Settings') + 1));
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1])));
}
