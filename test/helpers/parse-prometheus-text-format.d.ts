// The shape parse-prometheus-text-format returns (the package ships no types); it follows prom2json's.
declare module 'parse-prometheus-text-format' {
  export interface PrometheusSample {
    /** As written: a float in Go's ParseFloat syntax (NaN and ±Inf included, any case). */
    value?: string;
    labels?: Record<string, string>;
    timestamp_ms?: string;
  }

  /** A histogram or summary family is flattened into one entry of its buckets (or quantiles), count and sum. */
  export interface PrometheusAggregate {
    buckets?: Record<string, string>;
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }

  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Array<PrometheusSample & PrometheusAggregate>;
  }

  /** Throws on a line that is not valid in the text format. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
