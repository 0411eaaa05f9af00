import type { HistorySettings } from './history-settings.ts';
import { estimateTokens } from '../agent-calls/model-call.ts';
import { comparePositions, type HistoryMessage, type MessagePosition } from './session-history.ts';

/** Room always left for the summary, even when the verbatim messages take the whole target. */
export const MIN_SUMMARY_TOKENS = 64;

export interface HistorySplit {
  primers: HistoryMessage[];
  middle: HistoryMessage[];
  recents: HistoryMessage[];
}

export const tokensOf = (messages: HistoryMessage[]) => estimateTokens(...messages.map((message) => message.content));

/**
 * Splits a window that is too long into primers, the middle to summarise, and recents. When the verbatim
 * parts alone would not fit the target, the newest primers and then the oldest recents join the middle,
 * so they are summarised rather than overflow the model's window; recents go last as the reply depends
 * on them most.
 */
export function splitHistory(window: HistoryMessage[], settings: HistorySettings, fixedTokens: number, targetTokens: number): HistorySplit {
  const primers = window.slice(0, settings.primers);
  const recentsStart = Math.max(primers.length, window.length - settings.recents);
  const middle = window.slice(primers.length, recentsStart);
  const recents = window.slice(recentsStart);
  while (fixedTokens + tokensOf(primers) + tokensOf(recents) > targetTokens - MIN_SUMMARY_TOKENS && primers.length + recents.length > 0) {
    if (primers.length > 0) middle.unshift(primers.pop()!);
    else middle.push(recents.shift()!);
  }
  return { primers, middle, recents };
}

/** The middle messages a summary standing for everything through `through` does not cover yet. */
export function uncoveredMessages(middle: HistoryMessage[], through: MessagePosition | undefined): HistoryMessage[] {
  return through ? middle.filter((message) => comparePositions(message.position, through) > 0) : middle;
}
