import { registerHooks, syncBuiltinESMExports } from 'node:module';

/**
 * Locks down the worker thread a sandbox runs in. Python reaches JavaScript through Pyodide's bridge (from any
 * proxied function, `.constructor` is `Function`: arbitrary JavaScript in this thread), so the limits cannot live
 * in Python alone: every path from this thread to the host's network, files and processes is closed here.
 * A worker thread has its own copies of Node's modules and globals, so none of this touches the gateway's.
 */

/** Modules whose every function is replaced by a refusal: the network ones before Pyodide loads, the host ones after. */
const NETWORK_MODULES = ['dns', 'dns/promises', 'http', 'https', 'http2', 'tls'];
const HOST_MODULES = ['child_process', 'cluster', 'fs', 'fs/promises', 'inspector', 'worker_threads'];
const NETWORK_GLOBALS = ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest'];

/** Caps the WebAssembly heap: Pyodide grows memory through this method, and a refused growth is a MemoryError in Python. */
export function capWasmMemory(limitBytes: number): void {
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function growWithinLimit(this: WebAssembly.Memory, pages: number) {
    if (this.buffer.byteLength + pages * 65_536 > limitBytes) throw new RangeError('the sandbox memory limit is reached');
    return grow.call(this, pages);
  };
}

/** Before Pyodide loads, so that loading itself provably needs no network. */
export function refuseNetwork(): void {
  const net = process.getBuiltinModule('node:net');
  const dgram = process.getBuiltinModule('node:dgram');
  for (const [owner, name] of [[net, 'connect'], [net, 'createConnection'], [net, 'createServer'], [dgram, 'createSocket']] as const) {
    replaceWithRefusal(owner as unknown as Record<string, unknown>, name, 'network access');
  }
  for (const prototype of [net.Socket.prototype, net.Server.prototype, dgram.Socket.prototype]) {
    for (const name of ['connect', 'listen', 'bind', 'send']) {
      if (name in prototype) replaceWithRefusal(prototype as unknown as Record<string, unknown>, name, 'network access');
    }
  }
  for (const name of NETWORK_MODULES) refuseModule(name, 'network access');
  for (const name of NETWORK_GLOBALS) Reflect.deleteProperty(globalThis, name);
  syncBuiltinESMExports();
}

/**
 * After Pyodide has loaded (it reads its files and captures modules while loading): no host files, no processes,
 * no further module loading, no `process` object to reach Node's internals or the environment through, no console.
 */
export function refuseHost(): void {
  for (const name of HOST_MODULES) refuseModule(name, 'host access');
  syncBuiltinESMExports();
  registerHooks({ resolve: (specifier) => { throw new Error(`loading ${specifier} is disabled in the Python sandbox`); } });
  // Pyodide defines a global `require` that hands out fs and child_process.
  Reflect.deleteProperty(globalThis, 'require');
  Object.defineProperty(globalThis, 'process', { value: processStub(), writable: false, configurable: false });
  // A worker's console writes to the gateway's stdout, where the gateway's log lines go.
  Object.defineProperty(globalThis, 'console', { value: silentConsole(), writable: false, configurable: false });
}

function silentConsole(): Console {
  return Object.fromEntries(Object.keys(console).map((name) => [name, () => {}])) as unknown as Console;
}

/** What Pyodide itself reads of `process` after loading, and nothing that leads further. */
function processStub(): object {
  return { env: {}, argv: [], platform: process.platform, version: process.version, versions: { ...process.versions }, exitCode: undefined };
}

function refuseModule(name: string, what: string): void {
  const exports = process.getBuiltinModule(`node:${name}`) as Record<string, unknown>;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(exports))) {
    if (typeof descriptor.value === 'function' && descriptor.writable) replaceWithRefusal(exports, key, what);
  }
}

function replaceWithRefusal(owner: Record<string, unknown>, name: string, what: string): void {
  owner[name] = function refused() {
    throw Object.assign(new Error(`${what} is disabled in the Python sandbox`), { code: 'EACCES' });
  };
}
