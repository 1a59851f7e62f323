// Copying a secret shown once: to the clipboard, or, where there is none, selected on the page for the keyboard.
export type CopyOutcome = 'copied' | 'failed';

/** Writes `text` to the clipboard; without one (not a secure context, permission refused) selects `node`'s text instead. */
export async function copyOrSelect(text: string, node: Node | null): Promise<CopyOutcome> {
  try {
    await navigator.clipboard.writeText(text);
    return 'copied';
  } catch {
    const selection = window.getSelection();
    if (node && selection) {
      const range = document.createRange();
      range.selectNodeContents(node);
      selection.removeAllRanges();
      selection.addRange(range);
    }
    return 'failed';
  }
}
