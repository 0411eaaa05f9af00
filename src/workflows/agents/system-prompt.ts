import { findRolePreset, DEFAULT_ROLE } from './role-presets.ts';

/** `context.system_prompt` with `${name}` filled from `context.prompt_params`, else the role preset's prompt. */
export function buildSystemPrompt(context: Record<string, unknown>): string {
  const custom = context.system_prompt;
  if (typeof custom === 'string' && custom.trim() !== '') {
    const params = (context.prompt_params ?? {}) as Record<string, unknown>;
    return custom.replace(/\$\{([A-Za-z0-9_.-]+)\}/g, (placeholder, name: string) =>
      name in params ? String(params[name]) : placeholder);
  }
  const role = typeof context.role === 'string' ? context.role : DEFAULT_ROLE;
  return (findRolePreset(role) ?? findRolePreset(DEFAULT_ROLE)!).systemPrompt;
}
