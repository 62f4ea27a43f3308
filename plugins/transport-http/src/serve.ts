import type { AddressInfo } from 'node:net';
import { serve, upgradeWebSocket } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { createServerApp, type ServerAppOptions } from './app.js';

export interface StartServerOptions extends Omit<ServerAppOptions, 'upgradeWebSocket'> {
  port?: number;
  /** Default 127.0.0.1: listening on every interface is a deliberate choice (`0.0.0.0`). */
  hostname?: string;
  /** Serve `/v1/ws`. Default true. */
  websocket?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Stops taking connections, ends the hub's sessions (saved), closes WebSockets. */
  close(): Promise<void>;
}

/** The app on `@hono/node-server`, with WebSocket upgrades through `ws`. */
export function startServer(options: StartServerOptions): Promise<RunningServer> {
  // A WebSocket message is a request body: the same size limit (a larger frame closes the socket with 1009).
  const wss = options.websocket === false ? undefined : new WebSocketServer({ noServer: true, maxPayload: options.maxBodyBytes ?? 1024 * 1024 });
  const app = createServerApp({ ...options, ...(wss ? { upgradeWebSocket: upgradeWebSocket as ServerAppOptions['upgradeWebSocket'] } : {}) });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: options.hostname ?? '127.0.0.1', ...(wss ? { websocket: { server: wss } } : {}) }, (info: AddressInfo) => {
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        close: async () => {
          for (const client of wss?.clients ?? []) client.terminate();
          wss?.close();
          await options.hub.shutdown();
          await new Promise<void>((done) => server.close(() => done()));
        },
      });
    });
    server.on('error', reject);
  });
}
