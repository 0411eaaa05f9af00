import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { compileForeignSchema, errorsText } from '../../src/json-schemas.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('schemas from outside, compiled in the dialect they name', () => {
  it('2020-12, as zod 4 and LangChain write it: compiled, and its own keywords enforced', () => {
    const validate = compileForeignSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object', properties: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], items: false } },
      required: ['point'], additionalProperties: false,
    });
    assert.equal(validate({ point: [1, 'a'] }), true);
    assert.equal(validate({ point: ['a', 1] }), false, 'prefixItems is a 2020-12 keyword: read, not ignored');
    assert.equal(validate({ point: [1, 'a', 2] }), false);
  });

  it('2019-09, draft-07 with and without its trailing "#", and draft-06', () => {
    const dependent = { type: 'object', dependentRequired: { a: ['b'] } };
    assert.equal(compileForeignSchema({ $schema: 'https://json-schema.org/draft/2019-09/schema', ...dependent })({ a: 1 }), false);
    for (const $schema of ['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema', 'http://json-schema.org/draft-06/schema#']) {
      const validate = compileForeignSchema({ $schema, type: 'array', items: [{ type: 'number' }] });
      assert.equal(validate([1]), true, $schema);
      assert.equal(validate(['x']), false, `${$schema}: draft-07 tuple items`);
    }
  });

  it('without $schema a schema is read as draft-07: a tuple `items` list compiles', () => {
    assert.equal(compileForeignSchema({ type: 'array', items: [{ type: 'string' }] })([3]), false);
  });

  it('an unknown $schema is an error naming it; a schema the dialect refuses says why', () => {
    assert.throws(() => compileForeignSchema({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }), /\$schema "http:\/\/json-schema.org\/draft-04\/schema#" is not a dialect known here/);
    assert.throws(() => compileForeignSchema({ $schema: 42 }), /\$schema 42 is not a dialect/);
    assert.throws(() => compileForeignSchema({ type: 'object', properties: { a: { type: 'nonsense' } } }), /must be equal to one of the allowed values/);
    assert.throws(() => compileForeignSchema([]), /must be a JSON schema object/);
  });

  it('the same $id in every request compiles every time (it was refused from the second on)', () => {
    for (let round = 0; round < 3; round++) {
      const validate = compileForeignSchema({ $id: 'https://example.org/weather.json', type: 'object', required: ['city'] });
      assert.equal(validate({}), false);
    }
  });

  it('a compiled schema is not kept once its validator is dropped (every schema was kept for the life of the process)', async () => {
    let validate: ReturnType<typeof compileForeignSchema> | undefined = compileForeignSchema({ type: 'object', properties: { first: { type: 'string' } } });
    const first = new WeakRef(validate);
    validate = undefined;
    for (let index = 0; index < 200; index++) compileForeignSchema({ type: 'object', properties: { [`p${index}`]: { type: 'string' } } });
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(first.deref(), undefined);
  });

  it('errors read as one line naming the data', () => {
    const validate = compileForeignSchema({ type: 'object', required: ['text'] });
    validate({});
    assert.equal(errorsText(validate.errors, 'input'), "input must have required property 'text'");
  });
});
