// Spans and metrics of the token calls, printed by OpenTelemetry's console exporters. Run it against the emulator:
// `npm run emulator`, then
// API_URL=http://127.0.0.1:8080 API_USERNAME=demo API_PASSWORD=demo-password npx tsx examples/opentelemetry.ts
import axios from 'axios';
import { metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { attachTokenAuth } from 'axios-token-keeper';
import { instrumentTokenAuth } from 'axios-token-keeper/otel';

// Your telemetry setup, once per process (the Node SDK's `NodeSDK.start()` registers the same global providers).
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] }),
);
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 60_000 })],
});
metrics.setGlobalMeterProvider(meterProvider);

const api = axios.create({ baseURL: process.env.API_URL ?? 'https://api.example.com' });
const auth = attachTokenAuth(api, {
  credentials: { username: process.env.API_USERNAME ?? 'jane', password: process.env.API_PASSWORD ?? '' },
});
// One span per login and per token call; the attributes tell this account's apart from other attachments'.
const stopTelemetry = instrumentTokenAuth(auth, { attributes: { 'token_keeper.account': 'orders' } });

async function main(): Promise<void> {
  await api.get('/allocation/api/v1/tracking/order-list'); // the login: span `axios-token-keeper login`
  await auth.refresh(); // a token call: span `axios-token-keeper token`
  await meterProvider.shutdown(); // exports the metrics one last time
  stopTelemetry();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
