import type { TaskSettings } from '../runtime/task-settings.ts';
import { DEFAULT_ROLE, findRolePreset } from './role-presets.ts';

type PromptSettings = Pick<TaskSettings, 'systemPrompt' | 'promptParams' | 'role'>;

/** `context.system_prompt` with `${name}` filled from `context.prompt_params`, else the role preset's prompt. */
export function buildSystemPrompt(settings: PromptSettings): string {
  const custom = settings.systemPrompt;
  if (custom !== undefined && custom.trim() !== '') {
    return custom.replace(/\$\{([A-Za-z0-9_.-]+)\}/g, (placeholder, name: string) =>
      name in settings.promptParams ? String(settings.promptParams[name]) : placeholder);
  }
  return (findRolePreset(settings.role) ?? findRolePreset(DEFAULT_ROLE)!).systemPrompt;
}
