/**
 * The last message of a native stream when its server shuts down (issue 17): where to resume, on any process
 * (events are replayed from the database after that point). `resume_from` is the id of the last event sent, or
 * the resume point the client came with when nothing was sent yet.
 */
export function shutdownNotice(taskId: string, resumeFrom: string) {
  return {
    type: 'ERROR_OCCURRED', workflow_id: taskId, code: 'server_shutdown', last_event_id: resumeFrom,
    message: `the server is shutting down; reconnect with Last-Event-ID: ${resumeFrom} (any server resumes the stream there)`,
  };
}

/**
 * The last message of a native stream whose consumer fell more than the buffer limit behind: where to resume,
 * named by the last event it was sent (`seq`, `resumeFrom`), so resuming there loses nothing.
 */
export function fellBehindNotice(taskId: string, seq: number, resumeFrom: string, bufferLimitBytes: number) {
  return {
    type: 'ERROR_OCCURRED', workflow_id: taskId, seq, code: 'consumer_too_slow',
    message: `stream consumer fell more than ${bufferLimitBytes} bytes behind; reconnect with last_event_id=${resumeFrom}`,
  };
}
