/**
 * `context.use_case_preset` (spec 2.2) picks a history shape; explicit keys in the context override it.
 * `debugging` keeps more and mostly recent messages (the latest error output matters most); `quick` keeps
 * little, for short question-and-answer sessions.
 */
export const HISTORY_PRESETS = {
  default: { windowSize: 50, primers: 5, recents: 15 },
  debugging: { windowSize: 75, primers: 3, recents: 25 },
  quick: { windowSize: 20, primers: 2, recents: 8 },
} as const;

export type HistoryPreset = keyof typeof HISTORY_PRESETS;

export interface HistorySettings {
  /** How many of the latest messages are considered at all. */
  windowSize: number;
  /** The window's first messages, kept verbatim when the rest is summarised. */
  primers: number;
  /** The window's last messages, kept verbatim when the rest is summarised. */
  recents: number;
  /** Summarise when the prompt would exceed this share of the model's context window… */
  triggerRatio: number;
  /** …down to about this share. */
  targetRatio: number;
}

export function readHistorySettings(context: Record<string, unknown>): HistorySettings {
  const presetName = typeof context.use_case_preset === 'string' && context.use_case_preset in HISTORY_PRESETS
    ? context.use_case_preset as HistoryPreset : 'default';
  const preset = HISTORY_PRESETS[presetName];
  return {
    windowSize: numberOr(context.history_window_size, preset.windowSize),
    primers: numberOr(context.primers_count, preset.primers),
    recents: numberOr(context.recents_count, preset.recents),
    triggerRatio: numberOr(context.compression_trigger_ratio, 0.8),
    targetRatio: numberOr(context.compression_target_ratio, 0.5),
  };
}

const numberOr = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
