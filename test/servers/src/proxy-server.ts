import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { fileURLToPath } from 'node:url';

/** Paths of the test-only TLS material in `fixtures/tls` (see its README). */
export const TEST_TLS = (() => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tls');
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
})();

export interface ProxiedRequest {
  /** `CONNECT` for a tunnel, else the forwarded request's method. */
  method: string;
  /** `host:port` of a tunnel, or the absolute URL of a forwarded request. */
  target: string;
  proxyAuthorization: string | undefined;
}

export interface TestProxyOptions {
  /** Where a target `host:port` really is (a fake host name mapped to a loopback port). Unlisted targets are refused with 502. */
  routes: Record<string, number>;
  /** `user:password` the proxy requires (`Proxy-Authorization: Basic`); without it nothing is required. */
  credentials?: string;
}

/**
 * An HTTP proxy on loopback, for tests of proxy support: `CONNECT host:port` opens a tunnel and
 * an absolute-form request is forwarded, both to the loopback port `routes` gives for the
 * target (so fake host names need no DNS). Every request is recorded in `requests`.
 */
export class TestProxy {
  readonly requests: ProxiedRequest[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  constructor(private readonly options: TestProxyOptions) {
    this.#server = createServer((request, response) => {
      const target = request.url ?? '';
      this.#record(request, target);
      if (!this.#authorized(request)) {
        response.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
        return;
      }
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        response.writeHead(400).end('absolute-form request expected');
        return;
      }
      const port = this.options.routes[`${url.hostname}:${url.port || 80}`];
      if (port === undefined) {
        response.writeHead(502).end(`no route to ${url.host}`);
        return;
      }
      const headers = { ...request.headers };
      delete headers['proxy-authorization'];
      const onward = httpRequest({ host: '127.0.0.1', port, method: request.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      onward.on('error', () => response.destroy());
      request.pipe(onward);
    });
    this.#server.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => {
      const target = request.url ?? '';
      this.#record(request, target);
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => undefined);
      if (!this.#authorized(request)) {
        socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const port = this.options.routes[target];
      if (port === undefined) {
        socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const upstream = connect(port, '127.0.0.1', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      this.#sockets.add(upstream);
      upstream.on('close', () => this.#sockets.delete(upstream));
      upstream.on('error', () => socket.destroy());
    });
  }

  /** `http://127.0.0.1:<port>` once listening. */
  url = '';

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #record(request: IncomingMessage, target: string): void {
    this.requests.push({ method: request.method ?? '', target, proxyAuthorization: request.headers['proxy-authorization'] });
  }

  #authorized(request: IncomingMessage): boolean {
    if (this.options.credentials === undefined) return true;
    return request.headers['proxy-authorization'] === `Basic ${Buffer.from(this.options.credentials).toString('base64')}`;
  }
}

/**
 * TLS on loopback in front of a plain HTTP server (the fake APIs speak HTTP): the connection is
 * decrypted with the `TEST_TLS` certificate and piped to `port`.
 */
export class TlsTerminator {
  readonly #server: TlsServer;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly backendPort: number) {
    this.#server = createTlsServer({ cert: readFileSync(TEST_TLS.cert), key: readFileSync(TEST_TLS.key) }, (secure) => {
      const plain = connect(this.backendPort, '127.0.0.1');
      for (const socket of [secure, plain]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      secure.pipe(plain).pipe(secure);
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
