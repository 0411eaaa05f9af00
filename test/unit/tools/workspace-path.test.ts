import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_PATH_BYTES, MAX_PATH_DEPTH, MAX_SEGMENT_BYTES, normalizeWorkspaceDirectory, normalizeWorkspacePath, WorkspacePathError,
} from '../../../src/tools/files/workspace-path.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';
import { FILE_TOOLS } from '../../../src/tools/files/file-tools.ts';

/** Each attempt, and what the refusal must say about it. */
const ESCAPES: Array<[string, string, RegExp]> = [
  ['parent', '../x', /"\.\.": paths cannot leave the workspace/],
  ['parent after a name', 'a/../../x', /"\.\.": paths cannot leave the workspace/],
  ['parent at the end', 'a/..', /"\.\."/],
  ['absolute', '/etc/passwd', /absolute/],
  ['the root alone', '/', /absolute|ends with "\/"/],
  ['Windows drive with a backslash', 'C:\\x', /backslash/],
  ['Windows drive with a slash', 'C:/x', /names a drive/],
  ['backslash parents', 'a\\..\\b', /backslash/],
  ['UNC path', '\\\\server\\share', /backslash/],
  ['percent-encoded dots', '%2e%2e/x', /percent-encoded sequence "%2e"/],
  ['percent-encoded slash', 'a%2F..%2Fb', /percent-encoded sequence "%2F"/],
  ['NUL byte', 'a\0.txt', /NUL character/],
  ['NUL then parent', 'x.txt\0/../../etc', /NUL character/],
  ['current directory', 'a/./b', /segment "\."/],
  ['leading current directory', './a', /segment "\."/],
  ['three dots', '.../x', /dots only/],
  ['full-width dots', '．．/x', /U\+FF0E, a compatibility form of "\."/],
  ['full-width solidus', 'a／..／b', /U\+FF0F/],
  ['one-dot leader', '\u2024\u2024/x', /U\+2024/],
  ['right-to-left override', 'report\u202Etxt.exe', /direction-changing character U\+202E/],
  ['left-to-right isolate', 'a\u2066b', /U\+2066/],
  ['zero-width joiner', 'a\u200D/b', /invisible .* U\+200D/],
  ['zero-width space in a parent', '.\u200B./x', /U\+200B/],
  ['byte order mark', '\uFEFFa.txt', /U\+FEFF/],
  ['soft hyphen', 'pass\u00ADwd', /U\+00AD/],
  ['line separator', 'a\u2028b', /U\+2028/],
  ['newline', 'a\nb', /control character U\+000A/],
  ['escape character', 'a\u001B[31mb', /control character U\+001B/],
  ['unpaired surrogate', 'a\uD800b', /unpaired surrogate/],
  ['non-breaking space', 'a\u00A0b', /U\+00A0/],
  ['empty', '', /empty/],
  ['empty segment', 'a//b', /empty segment/],
  ['trailing slash', 'notes/', /ends with "\/"/],
  ['trailing space', 'a/b ', /white space/],
  ['very long path', `${`${'d'.repeat(200)}/`.repeat(6)}x`, new RegExp(`longer than ${MAX_PATH_BYTES} bytes`)],
  ['very long name', 'n'.repeat(MAX_SEGMENT_BYTES + 1), new RegExp(`longer than ${MAX_SEGMENT_BYTES} bytes`)],
  ['deep nesting', `${'a/'.repeat(MAX_PATH_DEPTH)}x`, new RegExp(`deeper than ${MAX_PATH_DEPTH}`)],
];

describe('workspace paths', () => {
  for (const [name, path, reason] of ESCAPES) {
    it(`refuses ${name}`, () => {
      assert.throws(() => normalizeWorkspacePath(path), (error: unknown) => {
        assert.ok(error instanceof WorkspacePathError);
        assert.match(error.message, /^invalid workspace path /);
        assert.match(error.message, reason);
        return true;
      });
    });
  }

  it('shows invisible characters of a refused path spelled out, not raw', () => {
    assert.throws(() => normalizeWorkspacePath('evil\u202Etxt.exe'), /"evil<U\+202E>txt\.exe"/);
  });

  it('accepts plain relative paths and returns them unchanged', () => {
    for (const path of ['a.txt', 'notes/plan.md', 'src/app/main.test.ts', '.env', 'a/.hidden/b', 'with space/file name.txt',
      'data-2024_v1.csv', '~user/x', 'ab:c', 'x%y', '100%', 'résumé.txt', '日本語/ファイル.txt', 'emoji 🎉.md', 'a..b', '..a', 'a..']) {
      assert.equal(normalizeWorkspacePath(path), path);
    }
    assert.equal(normalizeWorkspacePath('n'.repeat(MAX_SEGMENT_BYTES)), 'n'.repeat(MAX_SEGMENT_BYTES));
  });

  it('stores one spelling: a decomposed accent is composed (NFC)', () => {
    assert.equal(normalizeWorkspacePath('re\u0301sume\u0301.txt'), 'r\u00E9sum\u00E9.txt');
  });

  it('a directory is a prefix ending in "/"; the workspace root is "" (asked for with "" or ".")', () => {
    assert.equal(normalizeWorkspaceDirectory(undefined), '');
    assert.equal(normalizeWorkspaceDirectory(''), '');
    assert.equal(normalizeWorkspaceDirectory('.'), '');
    assert.equal(normalizeWorkspaceDirectory('notes'), 'notes/');
    assert.equal(normalizeWorkspaceDirectory('notes/2024/'), 'notes/2024/');
    for (const directory of ['..', '../x', '/', '/etc', 'a//', './a', 'a\\b', '%2e%2e']) {
      assert.throws(() => normalizeWorkspaceDirectory(directory), WorkspacePathError, directory);
    }
  });
});

describe('file tools without a session', () => {
  it('every file tool fails clearly when the call has no session', async () => {
    const context = offlineToolContext({ sessionId: null });
    for (const tool of FILE_TOOLS) {
      const input = { path: 'a.txt', content: 'x', old_text: 'x', new_text: 'y', pattern: 'x' };
      const args = Object.fromEntries(Object.entries(input).filter(([key]) => key in (tool.parameters.properties ?? {})));
      await assert.rejects(tool.execute(args, context), /file tools work in a session's workspace and this call has no session/, tool.name);
    }
  });

  it('write, edit and delete are dangerous; all are free and in the files category', () => {
    assert.deepEqual(FILE_TOOLS.map((tool) => [tool.name, tool.dangerous]), [
      ['file_read', false], ['file_write', true], ['file_edit', true], ['file_list', false], ['file_search', false], ['file_delete', true],
    ]);
    assert.ok(FILE_TOOLS.every((tool) => tool.category === 'files' && tool.costPerUseUsd === 0));
  });
});
