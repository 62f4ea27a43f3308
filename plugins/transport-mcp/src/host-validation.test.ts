import { describe, expect, it } from 'vitest';
import { checkHostAndOrigin } from './host-validation.js';

const request = (headers: Record<string, string>, url = 'http://127.0.0.1:4000/mcp') => new Request(url, { method: 'POST', headers });

describe('checkHostAndOrigin', () => {
  it('accepts localhost names on any port, and requests without an Origin', () => {
    for (const host of ['localhost:4000', '127.0.0.1:4000', '[::1]:4000', 'LOCALHOST', '127.0.0.1']) expect(checkHostAndOrigin(request({ host }))).toBeUndefined();
  });

  it('refuses another host name (DNS rebinding), naming the host', () => {
    expect(checkHostAndOrigin(request({ host: 'attacker.example:4000' }))).toContain('Host "attacker.example:4000" is not allowed');
  });

  it('accepts browser origins on a localhost name and refuses others', () => {
    expect(checkHostAndOrigin(request({ host: 'localhost:4000', origin: 'http://localhost:5173' }))).toBeUndefined();
    expect(checkHostAndOrigin(request({ host: 'localhost:4000', origin: 'https://evil.example' }))).toContain('Origin "https://evil.example" is not allowed');
    expect(checkHostAndOrigin(request({ host: 'localhost:4000', origin: 'null' }))).toContain('Origin "null" is not allowed');
  });

  it('takes the allowed hosts and origins from the options', () => {
    expect(checkHostAndOrigin(request({ host: 'agent.internal' }), { allowedHosts: ['agent.internal'] })).toBeUndefined();
    expect(checkHostAndOrigin(request({ host: 'localhost' }), { allowedHosts: ['agent.internal'] })).toBeDefined();
    expect(checkHostAndOrigin(request({ host: 'localhost', origin: 'https://app.example' }), { allowedOrigins: ['https://app.example'] })).toBeUndefined();
    expect(checkHostAndOrigin(request({ host: 'anything.example' }), { allowedHosts: ['*'] })).toBeUndefined();
  });
});
