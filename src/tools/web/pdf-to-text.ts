export interface PdfText {
  /** The document's Title entry; empty when it has none. */
  title: string;
  /** The text of every page, pages separated by a blank line. */
  text: string;
}

/** The text of a PDF (unpdf's build of pdf.js), loaded on the first PDF only: it is large. */
export async function pdfToText(bytes: Uint8Array): Promise<PdfText> {
  const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
  // pdf.js takes ownership of (detaches) the buffer it is given.
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const [{ text }, { info }] = await Promise.all([extractText(pdf, { mergePages: false }), getMeta(pdf)]);
    const title = typeof info?.Title === 'string' ? info.Title.trim() : '';
    return { title, text: text.map((page) => page.trim()).filter(Boolean).join('\n\n') };
  } finally {
    await pdf.destroy();
  }
}
