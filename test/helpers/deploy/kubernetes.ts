import path from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { readRepoFile, ROOT } from './repo-files.ts';

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
