//! Renderers of finished results: text for the terminal, JSON files, and one self-contained HTML
//! page with SVG charts. A renderer reads a result and writes; it never reaches back into the
//! engine, and nothing here measures or decides.
pub mod html;
pub mod load_text;
pub mod sweep_text;
