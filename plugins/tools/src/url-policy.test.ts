import { describe, expect, it } from 'vitest';
import { addressRefusal, blockedAddress, isLoopbackHost, upgradedToHttps } from './url-policy.js';

describe('blockedAddress', () => {
  it.each([
    ['169.254.169.254', 'link-local', true],
    ['fe80::1', 'link-local', true],
    ['::ffff:169.254.1.1', 'link-local', true],
    ['127.0.0.1', 'link-local', false],
    ['10.1.2.3', 'link-local', false],
    ['8.8.8.8', 'private', false],
    ['2606:4700::1111', 'private', false],
    ['127.0.0.1', 'private', true],
    ['10.1.2.3', 'private', true],
    ['172.31.255.255', 'private', true],
    ['172.32.0.1', 'private', false],
    ['192.168.1.1', 'private', true],
    ['100.64.0.1', 'private', true],
    ['0.0.0.0', 'private', true],
    ['::1', 'private', true],
    ['::', 'private', true],
    ['fd12:3456::1', 'private', true],
    ['ff02::1', 'private', true],
    ['::ffff:10.0.0.1', 'private', true],
    ['169.254.169.254', 'none', false],
  ] as const)('%s under %s: blocked %s', (address, policy, blocked) => {
    expect(blockedAddress(address, policy) !== undefined).toBe(blocked);
  });
});

describe('https upgrade and loopback hosts', () => {
  it.each([
    ['http://example.com/a', 'https://example.com/a'],
    ['http://example.com:80/a', 'https://example.com/a'],
    ['http://example.com:8080/a', 'https://example.com:8080/a'],
    ['https://example.com/', 'https://example.com/'],
    ['http://localhost:3000/', 'http://localhost:3000/'],
    ['http://127.9.9.9/', 'http://127.9.9.9/'],
    ['http://[::1]/', 'http://[::1]/'],
    ['http://10.0.0.1/', 'https://10.0.0.1/'],
  ])('%s → %s', (given, expected) => {
    expect(upgradedToHttps(new URL(given)).toString()).toBe(expected);
  });

  it('knows loopback names', () => {
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('a.localhost')).toBe(true);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });
});

describe('addressRefusal', () => {
  it('resolves names and refuses when any address is blocked; unresolvable names pass to the request', async () => {
    const resolve = async (host: string) => {
      if (host === 'gone.test') throw new Error('ENOTFOUND');
      return host === 'mixed.test' ? ['93.184.215.14', '10.0.0.5'] : ['93.184.215.14'];
    };
    expect(await addressRefusal(new URL('https://public.test/'), 'private', resolve)).toBeUndefined();
    expect(await addressRefusal(new URL('https://mixed.test/'), 'private', resolve)).toMatch(/mixed\.test resolves to 10\.0\.0\.5/);
    expect(await addressRefusal(new URL('https://mixed.test/'), 'link-local', resolve)).toBeUndefined();
    expect(await addressRefusal(new URL('https://gone.test/'), 'private', resolve)).toBeUndefined();
    let asked = false;
    expect(await addressRefusal(new URL('https://x.test/'), 'none', async () => ((asked = true), []))).toBeUndefined();
    expect(asked).toBe(false);
  });
});
