import { useEffect, useState } from 'preact/hooks';
import { api, type ToolCall, type ToolList, type ToolResult } from '../api/client';
import { formatCost } from '../format';
import { ArgumentFields, readArguments, type JsonSchema } from './tool-arguments';

type Tool = ToolList['tools'][number];

export function ToolsScreen() {
  const [list, setList] = useState<ToolList | null>(null);
  const [error, setError] = useState('');
  const [chosen, setChosen] = useState('');
  useEffect(() => { api<ToolList>('GET', '/api/v1/tools').then(setList, (failure: Error) => setError(failure.message)); }, []);
  const tool = list?.tools.find((item) => item.name === chosen);
  return (
    <>
      <h1>Tools</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {!list && !error && <p role="status">Loading tools…</p>}
      <div class="columns">
        {list && (
          <section class="card side" aria-labelledby="tool-list-title">
            <h2 id="tool-list-title">Available tools ({list.tools.length})</h2>
            <ul class="tool-list">
              {list.tools.map((item) => (
                <li key={item.name}>
                  <button type="button" class={item.name === chosen ? 'tool chosen' : 'tool'} aria-pressed={item.name === chosen}
                    onClick={() => setChosen(item.name)}>{item.name}</button>
                  <span class="hint"> {item.category}{item.cost_per_use > 0 ? ` · ${formatCost(item.cost_per_use)} a call` : ''}</span>
                </li>
              ))}
            </ul>
          </section>
        )}
        {tool ? <TryTool key={tool.name} tool={tool} /> : list && <p class="card grow">Choose a tool to see what it takes and try it.</p>}
      </div>
    </>
  );
}

function TryTool({ tool }: { tool: Tool }) {
  const [result, setResult] = useState<ToolResult | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const schema = tool.parameters as JsonSchema;
  const run = async (event: Event) => {
    event.preventDefault();
    setError('');
    setResult(null);
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const read = readArguments(schema, form);
    if (!read.ok) return setError(read.problem);
    const body: ToolCall = { arguments: read.value };
    const session = String(form.get('session_id') ?? '').trim();
    if (session) body.session_id = session;
    setBusy(true);
    try {
      setResult(await api<ToolResult>('POST', `/api/v1/tools/${encodeURIComponent(tool.name)}/execute`, body));
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card grow" aria-labelledby="try-tool-title">
      <h2 id="try-tool-title">Try {tool.name}</h2>
      <p>{tool.description}</p>
      <form class="stack" onSubmit={run}>
        <ArgumentFields schema={schema} />
        {tool.category === 'files' && <label>Session (its workspace)<input name="session_id" autocomplete="off" /></label>}
        <button type="submit" disabled={busy}>{busy ? 'Running…' : 'Run tool'}</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {result && <ToolOutcome result={result} />}
    </section>
  );
}

function ToolOutcome({ result }: { result: ToolResult }) {
  return (
    <div class="tool-result" data-testid="tool-result" role="status">
      <h3>{result.success ? 'Result' : 'The tool failed'}</h3>
      {result.error && <p class="error">{result.error}</p>}
      {result.success && <pre>{result.text ?? JSON.stringify(result.output, null, 2)}</pre>}
      <p class="hint">{result.execution_time_ms} ms · {formatCost(result.usage.cost_usd)}</p>
    </div>
  );
}
