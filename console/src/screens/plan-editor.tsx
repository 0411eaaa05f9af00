import { useState } from 'preact/hooks';

/** A plan as an approval shows it (the planned PROGRESS payload: src/workflows/planning/plan.ts, planPayload). */
export interface ShownPlan {
  plan: Array<{ id: string; name: string }>;
  deps?: Array<{ from: string; to: string }>;
  complexity_score?: number;
}

/** A plan as an approver hands it back in `modified_action`: what the decomposition answers (DecompositionSchema). */
export interface EditedPlan {
  complexity_score: number;
  subtasks: Array<{ id: string; description: string; dependencies: string[] }>;
}

interface Row { id: string; description: string; dependencies: string }

const ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_SUBTASKS = 8;

export function isShownPlan(action: unknown): action is ShownPlan {
  return typeof action === 'object' && action !== null && Array.isArray((action as ShownPlan).plan)
    && (action as ShownPlan).plan.every((item) => typeof item?.id === 'string' && typeof item?.name === 'string');
}

/**
 * Edits the plan an approval is about: each subtask's description and what it waits for; subtasks removed or
 * added. The gateway runs an edited plan only if it is a valid plan (else the original runs, silently), so the
 * editor refuses what the gateway would: unknown or repeated ids, dependencies on missing subtasks, a cycle.
 */
export function PlanEditor({ plan, onChange }: { plan: ShownPlan; onChange(edited: EditedPlan | string): void }) {
  const [rows, setRows] = useState<Row[]>(() => plan.plan.map((item) => ({
    id: item.id, description: item.name,
    dependencies: (plan.deps ?? []).filter((edge) => edge.to === item.id).map((edge) => edge.from).join(', '),
  })));
  const update = (next: Row[]) => {
    setRows(next);
    onChange(editedPlan(next, plan.complexity_score ?? 0.5));
  };
  const change = (index: number, field: keyof Row, value: string) => update(rows.map((row, at) => (at === index ? { ...row, [field]: value } : row)));
  return (
    <div class="plan-editor" data-testid="plan-editor">
      {rows.map((row, index) => (
        <fieldset key={index} data-edit-subtask={index}>
          <legend>Subtask {index + 1}</legend>
          <label>Id<input value={row.id} onInput={(event) => change(index, 'id', (event.currentTarget as HTMLInputElement).value)} /></label>
          <label>Description<textarea rows={2} value={row.description} onInput={(event) => change(index, 'description', (event.currentTarget as HTMLTextAreaElement).value)} /></label>
          <label>After (ids, comma-separated)<input value={row.dependencies} onInput={(event) => change(index, 'dependencies', (event.currentTarget as HTMLInputElement).value)} /></label>
          <div class="row"><button type="button" class="danger" onClick={() => update(rows.filter((_, at) => at !== index))}>Remove subtask {index + 1}</button></div>
        </fieldset>
      ))}
      {rows.length < MAX_SUBTASKS && (
        <div class="row"><button type="button" onClick={() => update([...rows, { id: nextId(rows), description: '', dependencies: '' }])}>Add a subtask</button></div>
      )}
    </div>
  );
}

/** The rows as a plan the gateway accepts, or what is wrong with them. */
export function editedPlan(rows: Row[], complexityScore: number): EditedPlan | string {
  if (rows.length === 0) return 'a plan needs at least one subtask';
  const ids = rows.map((row) => row.id.trim());
  const subtasks = rows.map((row, index) => ({
    id: ids[index],
    description: row.description.trim(),
    dependencies: [...new Set(row.dependencies.split(',').map((part) => part.trim()).filter(Boolean))],
  }));
  for (const subtask of subtasks) {
    if (!ID.test(subtask.id)) return `"${subtask.id}" is not a usable id (letters, digits, _ . : - only)`;
    if (subtask.description === '') return `subtask ${subtask.id} needs a description`;
    const unknown = subtask.dependencies.find((dependency) => !ids.includes(dependency));
    if (unknown !== undefined) return `subtask ${subtask.id} waits for ${unknown}, which is not in the plan`;
  }
  if (new Set(ids).size < ids.length) return 'two subtasks have the same id';
  if (hasCycle(subtasks)) return 'the subtasks wait for each other in a circle';
  return { complexity_score: complexityScore, subtasks };
}

function hasCycle(subtasks: EditedPlan['subtasks']): boolean {
  const done = new Set<string>();
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (const subtask of subtasks) {
      if (done.has(subtask.id) || !subtask.dependencies.every((dependency) => done.has(dependency))) continue;
      done.add(subtask.id);
      progressed = true;
    }
  }
  return done.size < subtasks.length;
}

function nextId(rows: Row[]): string {
  for (let number = rows.length + 1; ; number++) if (!rows.some((row) => row.id === `task-${number}`)) return `task-${number}`;
}
