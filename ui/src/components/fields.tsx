import { cloneElement, type ComponentChildren, type VNode } from "preact";
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
