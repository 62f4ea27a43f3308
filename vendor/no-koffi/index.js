throw new Error('koffi is not installed: Tessera omits pi-tui\'s Windows-only FFI dependency.');
