import assert from 'node:assert/strict';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';

export type Metrics = Record<string, PrometheusFamily>;
export type Labels = Record<string, string>;

/** Go's ParseFloat (the format's definition of a value) also takes NaN and ±Inf, in any case; prom-client writes `Nan`. */
const SPECIAL_VALUE = /^[+-]?(inf|infinity|nan)$/i;

/**
 * Fetches /metrics at `url` (a gateway's, or a metrics listener's) and parses it with a Prometheus text-format
 * parser, which throws on any line the format does not allow; every sample value must be a float.
 */
export async function scrapeMetrics(url: string, headers: Record<string, string> = {}): Promise<Metrics> {
  const response = await fetch(`${url}/metrics`, { headers });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(text);
  for (const family of families) {
    for (const sample of family.metrics) {
      for (const value of [sample.value, sample.count, sample.sum, ...Object.values(sample.buckets ?? {})]) {
        if (value !== undefined) assert.ok(SPECIAL_VALUE.test(value) || Number.isFinite(Number(value)), `${family.name}: ${value} is a float`);
      }
    }
  }
  return Object.fromEntries(families.map((family) => [family.name, family]));
}

/** The sum of a counter's or gauge's samples that carry these labels (0 when there are none). */
export function sampleValue(metrics: Metrics, name: string, labels: Labels = {}): number {
  const samples = metrics[name]?.metrics ?? [];
  return samples
    .filter((sample) => Object.entries(labels).every(([label, value]) => sample.labels?.[label] === value))
    .reduce((total, sample) => total + Number(sample.value), 0);
}

/**
 * A histogram's buckets (cumulative counts by `le`), count and sum. The parser flattens a histogram into one
 * entry: read this only of a histogram with a single series; a series with labels gets no count or sum.
 */
export function histogramOf(metrics: Metrics, name: string): { buckets: Record<string, number>; count?: number; sum?: number } {
  const [flattened] = metrics[name]?.metrics ?? [];
  const buckets = Object.fromEntries(Object.entries(flattened?.buckets ?? {}).map(([le, value]) => [le, Number(value)]));
  return {
    buckets,
    count: flattened?.count === undefined ? undefined : Number(flattened.count),
    sum: flattened?.sum === undefined ? undefined : Number(flattened.sum),
  };
}
