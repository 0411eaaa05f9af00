/**
 * The one way a path into a session's workspace is read (issue 15, scope 5). Workspace files are rows keyed
 * by their path, not entries of a file system: there are no symlinks, no directories of their own, and no
 * working directory, so a path can only "escape" by being read later by something that does interpret it
 * (a download link, a sandbox that mounts the workspace, a person's file manager). Hence a path is accepted
 * only in one plain spelling: relative, `/`-separated, NFC, with nothing that another reader could decode,
 * fold or display differently.
 */

/** The longest path, and the longest name (the usual file-system limit), in UTF-8 bytes. */
export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;
export const MAX_PATH_DEPTH = 32;

export class WorkspacePathError extends Error {
  constructor(input: string, reason: string) {
    super(`invalid workspace path ${quoted(input)}: ${reason}`);
    this.name = 'WorkspacePathError';
  }
}

/** Characters that are invisible, reorder the text around them, or separate lines: never part of a name. */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
const CONTROL = /\p{Cc}/u;
const UNPAIRED_SURROGATE = /\p{Cs}/u;
/** Decoded by URL handling and by some tools: `%2e%2e` would become `..` for them. */
const PERCENT_ENCODED = /%[0-9A-Fa-f]{2}/;
/** `C:x` is a plain name here but a drive path on Windows, where a workspace may one day be unpacked. */
const WINDOWS_DRIVE = /^[A-Za-z]:/;

/** The path of a file in its one accepted spelling (NFC), or a WorkspacePathError saying what is wrong with it. */
export function normalizeWorkspacePath(input: string): string {
  if (input === '') throw new WorkspacePathError(input, 'the path is empty');
  const path = checkCharacters(input);
  if (path.endsWith('/')) throw new WorkspacePathError(input, 'it ends with "/": name a file, not a directory');
  checkShape(input, path);
  return path;
}

/**
 * A directory to list or search under, as a prefix of file paths: `''` for the whole workspace (asked for
 * with `''` or `'.'`), else the directory's path followed by one `/`.
 */
export function normalizeWorkspaceDirectory(input: string | undefined): string {
  if (input === undefined || input === '' || input === '.') return '';
  const path = checkCharacters(input);
  const directory = path.endsWith('/') ? path.slice(0, -1) : path;
  checkShape(input, directory);
  return `${directory}/`;
}

/** Everything about single characters; returns the path in NFC. */
function checkCharacters(input: string): string {
  if (input.includes('\0')) throw new WorkspacePathError(input, 'it contains a NUL character');
  const control = CONTROL.exec(input);
  if (control) throw new WorkspacePathError(input, `it contains the control character ${codePoint(control[0])}`);
  if (UNPAIRED_SURROGATE.test(input)) throw new WorkspacePathError(input, 'it is not valid Unicode (an unpaired surrogate)');
  const invisible = INVISIBLE.exec(input);
  if (invisible) throw new WorkspacePathError(input, `it contains the invisible or direction-changing character ${codePoint(invisible[0])}`);
  if (input.includes('\\')) throw new WorkspacePathError(input, 'it contains a backslash: separate directories with "/"');
  const path = input.normalize('NFC');
  if (path.normalize('NFKC') !== path) throw new WorkspacePathError(input, compatibilityProblem(path));
  const encoded = PERCENT_ENCODED.exec(path);
  if (encoded) throw new WorkspacePathError(input, `it contains the percent-encoded sequence "${encoded[0]}": write the character itself`);
  return path;
}

/** Everything about the path as a whole and its segments. */
function checkShape(input: string, path: string): void {
  if (path.startsWith('/')) throw new WorkspacePathError(input, 'it is absolute: workspace paths are relative, e.g. "notes/todo.md"');
  if (WINDOWS_DRIVE.test(path)) throw new WorkspacePathError(input, 'it names a drive: workspace paths are relative, e.g. "notes/todo.md"');
  if (byteLength(path) > MAX_PATH_BYTES) throw new WorkspacePathError(input, `it is longer than ${MAX_PATH_BYTES} bytes`);
  const segments = path.split('/');
  if (segments.length > MAX_PATH_DEPTH) throw new WorkspacePathError(input, `it is nested deeper than ${MAX_PATH_DEPTH} levels`);
  for (const segment of segments) checkSegment(input, segment);
}

function checkSegment(input: string, segment: string): void {
  if (segment === '') throw new WorkspacePathError(input, 'it has an empty segment ("//")');
  if (segment === '..') throw new WorkspacePathError(input, 'it contains "..": paths cannot leave the workspace');
  if (/^\.+$/.test(segment)) throw new WorkspacePathError(input, `it contains the segment "${segment}": a name cannot be dots only`);
  if (segment.trim() !== segment) throw new WorkspacePathError(input, `the name "${segment}" begins or ends with white space`);
  if (byteLength(segment) > MAX_SEGMENT_BYTES) throw new WorkspacePathError(input, `a name is longer than ${MAX_SEGMENT_BYTES} bytes`);
}

/** Full-width dots, ligatures, non-breaking spaces…: characters that some reader would fold into others. */
function compatibilityProblem(path: string): string {
  const folded = [...path].find((character) => character.normalize('NFKC') !== character);
  return folded === undefined
    ? 'it changes under Unicode compatibility normalization (NFKC): write plain characters'
    : `it contains ${codePoint(folded)}, a compatibility form of "${folded.normalize('NFKC')}": write the plain character`;
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

const codePoint = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The input as it can be shown safely: invisible and control characters spelled out, long input cut. */
function quoted(input: string): string {
  const visible = input.replace(/[\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu, (character) => `<${codePoint(character)}>`);
  return JSON.stringify(visible.length > 120 ? `${visible.slice(0, 120)}…` : visible);
}
