import { styleText } from 'node:util';

type Style = Parameters<typeof styleText>[0];

/** Colours only on a terminal that has them, and never with NO_COLOR or --no-color. */
export function colorsFor(stream: NodeJS.WriteStream, enabled: boolean, env: NodeJS.ProcessEnv = process.env): (style: Style, text: string) => string {
  const useColor = enabled && !env.NO_COLOR && stream.isTTY === true && (stream.hasColors?.() ?? false);
  return useColor ? (style, text) => styleText(style, text, { validateStream: false }) : (_style, text) => text;
}

/** A list of records as aligned columns (the first line names them). */
export function table(rows: ReadonlyArray<object>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => cell((row as Record<string, unknown>)[column])));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((line) => line[index].length)));
  const line = (values: string[]) => values.map((value, index) => (index === values.length - 1 ? value : value.padEnd(widths[index]))).join('  ');
  return [line(columns.map((column) => column.toUpperCase())), ...cells.map(line)].join('\n');
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ').slice(0, 80);
}

/** `TASK_STATUS_COMPLETED` → `completed`. */
export const shortStatus = (status: string | undefined): string => (status ?? '').replace(/^TASK_STATUS_/, '').toLowerCase();

export const pretty = (value: unknown): string => JSON.stringify(value, null, 2);
