import type { Db } from '../db/database.ts';

export interface AuditEvent {
  type: 'login' | 'login_failed' | 'register' | 'token_refreshed' | 'refresh_reuse_detected'
    | 'api_key_created' | 'api_key_rotated' | 'api_key_revoked' | 'auth_denied' | 'policy_denied' | 'approval_decided'
    | 'research_plan_approved';
  userId?: string | null;
  tenantId?: string | null;
  ip?: string;
  details?: Record<string, unknown>;
}

/** Appends to the audit log. Never pass secrets in `details`. */
export async function recordAudit(db: Db, event: AuditEvent): Promise<void> {
  await db.insertInto('audit_logs').values({
    event_type: event.type,
    user_id: event.userId ?? null,
    tenant_id: event.tenantId ?? null,
    ip: event.ip ?? null,
    details: event.details ?? {},
  }).execute();
}
