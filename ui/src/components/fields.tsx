import { cloneElement, type ComponentChildren, type VNode } from "preact";
import { ErrorNote } from "./feedback.js";
import { useId } from "preact/hooks";

interface FieldProps {
  label: ComponentChildren;
  /** One input, select or textarea: it gets the id the label points at. */
  children: VNode<{ id?: string }>;
  className?: string;
}

/**
 * A labelled control. The label is tied by `for`/`id` rather than by wrapping, so the control's
 * accessible name is the label alone (a wrapping label would also read out a select's options).
 */
export function Field({ label, children, className }: FieldProps) {
  const id = useId();
  return (
    <div class={className ? `field ${className}` : "field"}>
      <label class="field-label" for={id}>
        {label}
      </label>
      {cloneElement(children, { id })}
    </div>
  );
}

interface FormFooterProps {
  /** The last failure, shown above the buttons. */
  error: unknown;
  busy: boolean;
  label: string;
  busyLabel: string;
  onCancel: () => void;
  danger?: boolean;
  disabled?: boolean;
}

/** A form's error, its submit button (showing `busyLabel` while the request runs) and Cancel. */
export function FormFooter({ error, busy, label, busyLabel, onCancel, danger = false, disabled = false }: FormFooterProps) {
  return (
    <>
      {error !== undefined && <ErrorNote error={error} />}
      <div class="form-actions">
        <button type="submit" class={danger ? "danger" : "primary"} disabled={busy || disabled}>
          {busy ? busyLabel : label}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
