import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from '@tessera/formats/project-folder';

/** What a project is written in and built with, read from its marker files (spec: project type/language detection). */
export interface ProjectKind {
  /** Languages or platforms, most specific first: `TypeScript`, `Rust`, `Python`… */
  languages: string[];
  /** Build tools and package managers: `npm`, `cargo`, `uv`… */
  tools: string[];
}

/** Marker file → language and tool. Checked in this order, so the line reads the same every time. */
const MARKERS: ReadonlyArray<{ file: string | RegExp; language: string; tool?: string }> = [
  { file: 'Cargo.toml', language: 'Rust', tool: 'cargo' },
  { file: 'go.mod', language: 'Go', tool: 'go modules' },
  { file: 'pyproject.toml', language: 'Python' },
  { file: 'setup.py', language: 'Python', tool: 'setuptools' },
  { file: 'requirements.txt', language: 'Python', tool: 'pip' },
  { file: 'uv.lock', language: 'Python', tool: 'uv' },
  { file: 'poetry.lock', language: 'Python', tool: 'poetry' },
  { file: 'Gemfile', language: 'Ruby', tool: 'bundler' },
  { file: 'pom.xml', language: 'Java', tool: 'maven' },
  { file: 'build.gradle.kts', language: 'Kotlin', tool: 'gradle' },
  { file: 'build.gradle', language: 'Java', tool: 'gradle' },
  { file: /\.(csproj|fsproj|sln)$/, language: 'C#', tool: 'dotnet' },
  { file: 'composer.json', language: 'PHP', tool: 'composer' },
  { file: 'mix.exs', language: 'Elixir', tool: 'mix' },
  { file: 'Package.swift', language: 'Swift', tool: 'swift package manager' },
  { file: 'CMakeLists.txt', language: 'C/C++', tool: 'cmake' },
  { file: 'deno.json', language: 'TypeScript', tool: 'deno' },
  { file: 'pnpm-lock.yaml', language: 'JavaScript', tool: 'pnpm' },
  { file: 'yarn.lock', language: 'JavaScript', tool: 'yarn' },
  { file: /^bun\.lockb?$/, language: 'JavaScript', tool: 'bun' },
  { file: 'package-lock.json', language: 'JavaScript', tool: 'npm' },
  { file: 'package.json', language: 'JavaScript' },
];

function names(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** Whether the folder's package.json or a tsconfig says TypeScript. */
function usesTypeScript(folder: string, files: readonly string[]): boolean {
  if (files.some((name) => /^tsconfig(\..+)?\.json$/.test(name))) return true;
  if (!files.includes('package.json')) return false;
  try {
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { dependencies?: object; devDependencies?: object };
    return 'typescript' in { ...manifest.dependencies, ...manifest.devDependencies };
  } catch {
    // A package.json that does not parse says nothing more.
    return false;
  }
}

/**
 * The project's languages and tools from the marker files in `cwd` and, inside a repository, in
 * its root (a session started in a package of a monorepo sees both). Only those two folders are
 * listed; nothing is run. Undefined when no marker is found.
 */
export function detectProjectKind(cwd: string): ProjectKind | undefined {
  const root = repositoryRoot(cwd);
  const folders = root === undefined || root === cwd ? [cwd] : [cwd, root];
  const languages: string[] = [];
  const tools: string[] = [];
  const add = (list: string[], value: string | undefined): void => {
    if (value !== undefined && !list.includes(value)) list.push(value);
  };
  for (const folder of folders) {
    const files = names(folder);
    if (files.length === 0) continue;
    const typescript = usesTypeScript(folder, files);
    for (const marker of MARKERS) {
      const { file } = marker;
      if (!(typeof file === 'string' ? files.includes(file) : files.some((name) => file.test(name)))) continue;
      add(languages, marker.language === 'JavaScript' && typescript ? 'TypeScript' : marker.language);
      add(tools, marker.tool);
    }
  }
  // "TypeScript" already says JavaScript.
  const shown = languages.includes('TypeScript') ? languages.filter((language) => language !== 'JavaScript') : languages;
  return shown.length === 0 ? undefined : { languages: shown, tools };
}

/** `TypeScript (npm)`, `Rust, Python (cargo, uv)`. */
export function describeProjectKind(kind: ProjectKind): string {
  return kind.tools.length === 0 ? kind.languages.join(', ') : `${kind.languages.join(', ')} (${kind.tools.join(', ')})`;
}
