/**
 * Response and item ids are derived from the task id (`resp_` + its 32 hex digits), so a response needs no id
 * of its own and every process names its items alike (streams resumed elsewhere carry the same ids).
 */
export const responseIdOf = (taskId: string) => `resp_${taskId.replaceAll('-', '')}`;

export const outputMessageIdOf = (taskId: string) => `msg_${taskId.replaceAll('-', '')}`;

export const inputItemIdOf = (taskId: string, index: number) => `msg_${taskId.replaceAll('-', '')}_in${index}`;

/** The task id a response id names, or undefined when it is not one of ours. */
export function taskIdOfResponse(responseId: string): string | undefined {
  const match = /^resp_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/.exec(responseId);
  return match ? match.slice(1).join('-') : undefined;
}

export const functionCallIdOf = (taskId: string, index: number) => `fc_${taskId.replaceAll('-', '')}_${index}`;
