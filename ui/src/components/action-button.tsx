import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useApp } from "../context.js";

interface ActionButtonProps {
  onAction: () => Promise<unknown>;
  children: ComponentChildren;
  className?: string;
  disabled?: boolean;
  label?: string;
  /** Told to the user when the action succeeds. */
  success?: string;
}

/** A button for one request: disabled while it runs, its failure shown as a notice. */
export function ActionButton({ onAction, children, className, disabled = false, label, success }: ActionButtonProps) {
  const { notify } = useApp();
  const [busy, setBusy] = useState(false);
  const run = () => {
    setBusy(true);
    onAction()
      .then(() => {
        if (success) notify("success", success);
      })
      .catch((error: unknown) => notify("error", errorText(error)))
      .finally(() => setBusy(false));
  };
  return (
    <button type="button" class={className} onClick={run} disabled={disabled || busy} aria-busy={busy} aria-label={label}>
      {children}
    </button>
  );
}
