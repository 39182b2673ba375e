/** Closes every tracked store once, whatever the test already closed. */
export function closer<T extends { close(): Promise<void> }>() {
  const open = new Set<T>();
  return {
    track<S extends T>(store: S): S {
      const close = store.close.bind(store);
      store.close = async () => {
        if (!open.delete(store)) return;
        await close();
      };
      open.add(store);
      return store;
    },
    async closeAll() {
      for (const store of [...open]) await store.close();
    },
  };
}
