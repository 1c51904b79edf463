// Modal dialogs on the native <dialog> element: it traps focus, closes on Escape and gives focus
// back to what opened it.

import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { ErrorNote } from "./feedback.js";

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}

export function Dialog({ title, onClose, children, wide = false }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  // Its own id: a dialog may open over another (an entry from a task's decision), each named by its title.
  const titleId = useId();
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return undefined;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.showModal();
    const closed = () => onCloseRef.current();
    dialog.addEventListener("close", closed);
    return () => {
      dialog.removeEventListener("close", closed);
      if (dialog.open) dialog.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog ref={ref} class={wide ? "dialog dialog-wide" : "dialog"} aria-labelledby={titleId}>
      <header class="dialog-header">
        <h2 id={titleId}>{title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick={() => ref.current?.close()}>
          ×
        </button>
      </header>
      <div class="dialog-body">{children}</div>
    </dialog>
  );
}

interface ConfirmProps {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  danger?: boolean;
}

/** Asks before doing something that cannot be undone; the action's error stays in the dialog. */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onClose, danger = true }: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const confirm = () => {
    setBusy(true);
    setError(undefined);
    onConfirm().then(
      () => onClose(),
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <div class="confirm-text">{children}</div>
      {error !== undefined && <ErrorNote error={error} />}
      <div class="form-actions">
        <button type="button" class={danger ? "danger" : "primary"} onClick={confirm} disabled={busy}>
          {busy ? "Working…" : confirmLabel}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
