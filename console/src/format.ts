/** `TASK_STATUS_RUNNING` → `running`, `EXECUTION_MODE_STANDARD` → `standard`. */
export function shortEnum(value: string | null | undefined): string {
  if (!value) return '';
  return value.replace(/^(TASK_STATUS_|EXECUTION_MODE_)/, '').toLowerCase();
}

export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  return usd < 0.01 ? `$${usd.toFixed(6)}` : `$${usd.toFixed(2)}`;
}

export function formatAge(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

export const TERMINAL_STATUSES = new Set(['completed', 'failed', 'cancelled', 'timeout']);
