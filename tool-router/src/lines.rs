//! Line and column numbers of byte offsets in a tools file, for its messages: the line
//! starts are found once, then each position is a binary search, so placing every tool of a
//! large file stays linear (rescanning the text from its start per tool was quadratic).

/// Where each line of a text starts.
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// The byte offset of each line's first byte: 0, then one past each `\n`.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// The line (from 1) of the byte at `offset`: one more than the `\n`s before it. An offset
    /// past the end is on the last line.
    pub(crate) fn line(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        // `starts[0]` is 0, so at least one start is at or before any offset.
        self.starts.partition_point(|&start| start <= offset)
    }

    /// The line and the column (both from 1; the column counts characters from the line's
    /// start) of the byte at `offset`. An offset inside a character is that character's.
    pub(crate) fn line_and_column(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line(offset);
        let start = self.starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;

    /// What the readers counted before: the `\n`s before the offset, and the characters since
    /// the last of them.
    fn rescanned(text: &str, offset: usize) -> (usize, usize) {
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    #[test]
    fn positions_count_lines_from_newlines_and_columns_in_characters() {
        let text = "ab\nçé x\n\n\u{1F600}z\r\nend";
        let lines = Lines::new(text);
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            assert_eq!(
                lines.line_and_column(offset),
                rescanned(text, offset),
                "at byte {offset}"
            );
            assert_eq!(lines.line(offset), rescanned(text, offset).0);
        }
        assert_eq!(lines.line_and_column(0), (1, 1));
        // The newline itself ends its line.
        assert_eq!(lines.line_and_column(2), (1, 3));
        // After two two-byte characters and a space, `x` is the fourth character of line 2.
        assert_eq!(lines.line_and_column(text.find('x').unwrap()), (2, 4));
        assert_eq!(lines.line_and_column(text.find('z').unwrap()), (4, 2));
        assert_eq!(lines.line_and_column(text.find("end").unwrap()), (5, 1));
    }

    #[test]
    fn an_offset_inside_a_character_or_past_the_end_never_panics() {
        let text = "a\n\u{1F600}";
        let lines = Lines::new(text);
        // Bytes 3 to 5 are inside the emoji: its own position.
        for offset in 3..6 {
            assert_eq!(lines.line_and_column(offset), (2, 1));
        }
        assert_eq!(lines.line_and_column(100), (2, 2));
        assert_eq!(lines.line(100), 2);
        assert_eq!(Lines::new("").line_and_column(5), (1, 1));
    }
}
