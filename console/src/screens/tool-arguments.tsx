/**
 * A form for a tool's arguments, from the JSON schema the gateway lists (the subset tools use: an object of
 * string, number, integer, boolean and enum properties; arrays and objects are typed as JSON). The server
 * validates the arguments again; this only turns fields into the right JSON types.
 */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

type Kind = 'text' | 'long text' | 'number' | 'integer' | 'boolean' | 'choice' | 'json' | 'list';

function kindOf(property: JsonSchema): Kind {
  const type = Array.isArray(property.type) ? property.type.find((item) => item !== 'null') : property.type;
  if (property.enum) return 'choice';
  if (type === 'integer') return 'integer';
  if (type === 'number') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'array' && property.items?.type === 'string' && !property.items.enum) return 'list';
  if (type === 'array' || type === 'object') return 'json';
  return (property.maxLength ?? 0) > 400 ? 'long text' : 'text';
}

const fieldName = (name: string) => `argument:${name}`;

export function ArgumentFields({ schema }: { schema: JsonSchema }) {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return <p class="hint">This tool takes no arguments.</p>;
  const required = new Set(schema.required ?? []);
  return <>{properties.map(([name, property]) => <ArgumentField key={name} name={name} property={property} required={required.has(name)} />)}</>;
}

function ArgumentField({ name, property, required }: { name: string; property: JsonSchema; required: boolean }) {
  const kind = kindOf(property);
  const hintId = `hint-${name}`;
  const label = `${name}${required ? '' : ' (optional)'}`;
  const hint = [property.description, kind === 'json' ? 'as JSON' : '', kind === 'list' ? 'one a line' : ''].filter(Boolean).join(' · ');
  const defaultValue = property.default === undefined ? undefined : String(property.default);
  const describedBy = hint ? hintId : undefined;
  let input;
  if (kind === 'boolean') {
    return (
      <div>
        <label class="inline"><input type="checkbox" name={fieldName(name)} defaultChecked={property.default === true} aria-describedby={describedBy} />{label}</label>
        {hint && <p class="hint" id={hintId}>{hint}</p>}
      </div>
    );
  }
  if (kind === 'choice') {
    input = (
      <select name={fieldName(name)} required={required} aria-describedby={describedBy} defaultValue={defaultValue}>
        {!required && <option value="">—</option>}
        {property.enum!.map((value) => <option key={String(value)} value={JSON.stringify(value)}>{String(value)}</option>)}
      </select>
    );
  } else if (kind === 'number' || kind === 'integer') {
    input = <input type="number" name={fieldName(name)} required={required} min={property.minimum} max={property.maximum} step={kind === 'integer' ? 1 : 'any'} defaultValue={defaultValue} aria-describedby={describedBy} />;
  } else if (kind === 'text') {
    input = <input name={fieldName(name)} required={required} maxLength={property.maxLength} defaultValue={defaultValue} autocomplete="off" aria-describedby={describedBy} />;
  } else {
    input = <textarea name={fieldName(name)} rows={kind === 'long text' ? 6 : 3} required={required} aria-describedby={describedBy} />;
  }
  return (
    <>
      <label>{label}{input}</label>
      {hint && <p class="hint" id={hintId}>{hint}</p>}
    </>
  );
}

/** The form's fields as the tool's arguments; empty optional fields are left out (the tool's defaults apply). */
export function readArguments(schema: JsonSchema, form: FormData): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  const value: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const kind = kindOf(property);
    const raw = form.get(fieldName(name));
    if (kind === 'boolean') {
      if (raw !== null) value[name] = true;
      else if (property.default !== undefined || (schema.required ?? []).includes(name)) value[name] = false;
      continue;
    }
    const text = String(raw ?? '').trim();
    if (!text) continue;
    if (kind === 'number' || kind === 'integer') value[name] = Number(text);
    else if (kind === 'choice') value[name] = JSON.parse(text);
    else if (kind === 'list') value[name] = text.split('\n').map((line) => line.trim()).filter(Boolean);
    else if (kind === 'json') {
      try {
        value[name] = JSON.parse(text);
      } catch {
        return { ok: false, problem: `${name} is not valid JSON` };
      }
    } else value[name] = text;
  }
  return { ok: true, value };
}
