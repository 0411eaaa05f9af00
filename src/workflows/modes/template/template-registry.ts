import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseTemplateFile, type KnownTools, type WorkflowTemplate } from './template-file.ts';
import { compareVersions, latestOf } from './template-version.ts';

/** The workflow templates of this deployment, read once at start-up. */
export interface TemplateRegistry {
  /** The template of that name at that version, or at its latest release when none is given (template-version.ts). */
  find(name: string, version?: string): WorkflowTemplate | undefined;
  /** Every template, by name, oldest version first. */
  list(): WorkflowTemplate[];
}

/**
 * Reads every `*.yaml` / `*.yml` under the directory (subfolders included). Any invalid file, or two files
 * with the same name and version, stops start-up with every problem listed under the file it is in.
 */
export function loadTemplateRegistry(directory: string, tools: KnownTools): TemplateRegistry {
  if (!existsSync(directory)) throw new Error(`templates directory ${directory} does not exist (set TEMPLATES_DIR)`);
  const templates: WorkflowTemplate[] = [];
  const invalid: string[] = [];
  for (const file of templateFiles(directory)) {
    const checked = parseTemplateFile(file, readFileSync(file, 'utf8'), tools);
    if ('template' in checked) templates.push(checked.template);
    else invalid.push(`invalid template file ${file}:\n  ${checked.problems.join('\n  ')}`);
  }
  if (invalid.length > 0) throw new Error(invalid.join('\n'));
  return createTemplateRegistry(templates);
}

function templateFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((entry) => /\.ya?ml$/i.test(entry))
    .sort()
    .map((entry) => path.join(directory, entry));
}

export function createTemplateRegistry(templates: WorkflowTemplate[]): TemplateRegistry {
  const sorted = [...templates].sort((a, b) => a.name.localeCompare(b.name) || compareVersions(a.version, b.version));
  const duplicate = sorted.find((template, index) => index > 0 && sameRelease(template, sorted[index - 1]));
  if (duplicate) {
    const first = sorted[sorted.indexOf(duplicate) - 1];
    throw new Error(`template ${duplicate.name} ${duplicate.version} is defined twice: in ${first.file} and ${duplicate.file}`);
  }
  return {
    find(name, version) {
      const releases = sorted.filter((template) => template.name === name);
      if (version === undefined) return latestOf(releases);
      return releases.find((template) => template.version === version);
    },
    list: () => [...sorted],
  };
}

const sameRelease = (a: WorkflowTemplate, b: WorkflowTemplate) => a.name === b.name && a.version === b.version;
