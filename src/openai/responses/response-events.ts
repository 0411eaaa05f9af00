import type { TaskEvent } from '../../events/append-event.ts';
import type { FunctionCallItem } from './input-items.ts';
import type { ResponseRecord } from './queries.ts';
import { outputMessageIdOf } from './response-ids.ts';
import { openingView, outputMessage, outputText } from './response-view.ts';
import type { ResponseView } from './schemas.ts';

type OutputMessage = { type: 'message'; content: Array<{ text: string }> };

export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

/** The task events a response stream is made of (STREAM_END always comes too). */
export const RESPONSE_SOURCE_EVENTS = ['WORKFLOW_STARTED', 'LLM_PARTIAL', 'LLM_OUTPUT'];

/** Token deltas of the agent whose output is the task's answer (workflows mark them `final_answer`). */
const isAnswerDelta = (event: TaskEvent) => event.type === 'LLM_PARTIAL' && event.payload?.final_answer === true;
const isFinalOutput = (event: TaskEvent) => event.type === 'LLM_OUTPUT' && event.agent_id === 'final_output';

/**
 * The Responses API's typed stream events of one response, as a pure function of its record and its task's
 * event log read from the start: the same log gives the same events with the same `sequence_number` in any
 * process, which is what lets a stream resume with `starting_after` anywhere, gap-free. The final event
 * carries the response as it ended (read once the log has ended, when it no longer changes).
 */
export function createResponseEventMapper(record: ResponseRecord) {
  const itemId = outputMessageIdOf(record.taskId);
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  let next = 0;
  let started = false;
  let itemOpen = false;
  let answerSeen = false;
  let text = '';
  const emit = (type: string, fields: Record<string, unknown>): ResponseStreamEvent => ({ type, sequence_number: next++, ...fields });

  const markStarted = () => {
    if (started) return [];
    started = true;
    return [emit('response.in_progress', { response: { ...openingView(record), status: 'in_progress' } })];
  };
  const openItem = () => {
    if (itemOpen) return [];
    itemOpen = true;
    return [
      emit('response.output_item.added', { output_index: 0, item: outputMessage(record.taskId, '', 'in_progress') }),
      emit('response.content_part.added', { ...at, part: outputText('') }),
    ];
  };
  const addText = (delta: string) => {
    text += delta;
    return [...markStarted(), ...openItem(), emit('response.output_text.delta', { ...at, delta, logprobs: [] })];
  };
  /** The answer's message: what was not streamed is sent whole, then the message closes (incomplete when cut short). */
  const completeMessage = (item: OutputMessage, status: 'completed' | 'incomplete') => {
    const answer = item.content[0]?.text ?? '';
    return [...(answerSeen || answer === '' ? openItem() : addText(answer)), ...closeItem(status)];
  };
  /** A client function the model called: known whole once the task has ended, so its arguments come in one delta. */
  const functionCallEvents = (item: FunctionCallItem, index: number) => [
    emit('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } }),
    emit('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: item.arguments }),
    emit('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments }),
    emit('response.output_item.done', { output_index: index, item }),
  ];
  const closeItem = (status: 'completed' | 'incomplete') => [
    emit('response.output_text.done', { ...at, text, logprobs: [] }),
    emit('response.content_part.done', { ...at, part: outputText(text) }),
    emit('response.output_item.done', { output_index: 0, item: outputMessage(record.taskId, text, status) }),
  ];

  return {
    opening: (): ResponseStreamEvent[] => [emit('response.created', { response: openingView(record) })],

    onTaskEvent(event: TaskEvent): ResponseStreamEvent[] {
      if (event.type === 'WORKFLOW_STARTED') return markStarted();
      if (isAnswerDelta(event)) {
        answerSeen = true;
        return event.message ? addText(event.message) : [];
      }
      // A workflow that does not stream its answer still records it whole.
      if (isFinalOutput(event) && !answerSeen) {
        answerSeen = true;
        return event.message ? addText(event.message) : [];
      }
      return [];
    },

    closing(final: ResponseView): ResponseStreamEvent[] {
      if (final.status === 'completed' || final.status === 'incomplete') {
        const ended = final.status;
        const started = markStarted();
        const items = final.output as Array<OutputMessage | FunctionCallItem>;
        const events = items.flatMap((item, index) => (item.type === 'message' ? completeMessage(item, ended) : functionCallEvents(item, index)));
        return [...started, ...events, emit(`response.${ended}`, { response: final })];
      }
      // No terminal event of the API names a cancelled response: it ends like a failed one, its status saying which.
      return [...(itemOpen ? closeItem('incomplete') : []), emit('response.failed', { response: final })];
    },

    /** The number the next event would take: what an out-of-band `error` event carries. */
    peekSequenceNumber: () => next,
  };
}
