import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reportDeltas } from '../../src/workflows/modes/research/report-deltas.ts';

describe('the research report as the answer\'s deltas', () => {
  it('one delta per paragraph, which join back to the report exactly, keyed by their offset', () => {
    const report = 'Short answer [1].\n\nDetails [2]\nacross lines.\n\n\n## Sources\n\n[1] A - https://a.example\n[2] B - https://b.example\n';
    const deltas = reportDeltas(report);
    assert.deepEqual(deltas.map((delta) => delta.message), [
      'Short answer [1].\n\n', 'Details [2]\nacross lines.\n\n\n', '## Sources\n\n', '[1] A - https://a.example\n[2] B - https://b.example\n',
    ]);
    assert.equal(deltas.map((delta) => delta.message).join(''), report);
    assert.deepEqual(deltas.map((delta) => delta.dedupeKey), ['research:report:p0', 'research:report:p19', 'research:report:p47', 'research:report:p59']);
    for (const delta of deltas) {
      assert.equal(delta.type, 'LLM_PARTIAL');
      assert.equal(delta.agentId, 'final_output');
      assert.deepEqual(delta.payload, { final_answer: true }, 'the text is the message alone, not copied into the payload');
    }
  });

  it('an empty report sends no delta', () => {
    assert.deepEqual(reportDeltas(''), []);
  });
});
