// Scaffold: filled in by the issue that builds this package.
export {};
