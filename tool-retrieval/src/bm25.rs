//! A BM25 index over tool texts, in process.

use std::collections::HashMap;

use super::text::words;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Term -> postings of (document, term frequency); built once.
///
/// A word's count in one text saturates at `u32::MAX` (about 4.3 billion).
#[derive(Debug, Default)]
pub struct Bm25Index {
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<f32>,
    average_length: f32,
}

impl Bm25Index {
    /// Indexes documents; document `i` is `texts[i]`.
    pub fn build<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (doc, text) in texts.into_iter().enumerate() {
            let words = words(text);
            lengths.push(words.len() as f32);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for word in words {
                let count = counts.entry(word).or_default();
                *count = count.saturating_add(1);
            }
            for (word, count) in counts {
                postings.entry(word).or_default().push((doc as u32, count));
            }
        }
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().sum::<f32>() / lengths.len() as f32
        };
        Bm25Index {
            postings,
            lengths,
            average_length,
        }
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Every document's score for the query (0 for no shared word).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let mut scores = vec![0.0f32; self.lengths.len()];
        let n = self.lengths.len() as f32;
        let mut terms = words(query);
        terms.sort();
        terms.dedup();
        for term in terms {
            let Some(postings) = self.postings.get(&term) else {
                continue;
            };
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in postings {
                let tf = tf as f32;
                let norm = 1.0 - B + B * self.lengths[doc as usize] / self.average_length.max(1.0);
                scores[doc as usize] += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        scores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_documents_sharing_rare_words_first() {
        let index = Bm25Index::build([
            "weather forecast for a city",
            "convert currency rates",
            "city guide and maps",
        ]);
        let scores = index.scores("what is the weather in my city");
        assert!(scores[0] > scores[2] && scores[2] > scores[1], "{scores:?}");
        assert_eq!(scores[1], 0.0);
    }

    #[test]
    fn a_chinese_query_meets_a_chinese_description() {
        let index = Bm25Index::build(["天气预报 weather forecast", "汇率换算 currency", "地图"]);
        let scores = index.scores("北京天气怎么样");
        assert!(scores[0] > 0.0, "{scores:?}");
        assert_eq!(&scores[1..], [0.0, 0.0]);
    }

    #[test]
    fn shorter_documents_win_at_equal_term_frequency() {
        let index = Bm25Index::build([
            "stock prices",
            "stock prices and many other unrelated words here",
            "nothing",
        ]);
        let scores = index.scores("stock");
        assert!(scores[0] > scores[1], "{scores:?}");
    }

    #[test]
    fn a_description_repeating_one_word_65_536_times_counts_it_exactly() {
        // 65,536 times overflowed the `u16` counts this index had (a panic in debug builds, a
        // count of 0 in release): about 260 KB, under a catalog's 1 MiB line limit.
        let repeated = "weather ".repeat(65_536);
        let index = Bm25Index::build([repeated.as_str(), "convert currency rates"]);
        assert_eq!(index.postings["weather"], [(0, 65_536)]);
        let scores = index.scores("weather");
        assert!(scores[0] > 0.0 && scores[0].is_finite(), "{scores:?}");
        assert_eq!(scores[1], 0.0);
    }

    #[test]
    fn an_empty_index_or_query_scores_nothing() {
        assert!(Bm25Index::build(Vec::<&str>::new()).scores("x").is_empty());
        let index = Bm25Index::build(["a b c"]);
        assert_eq!(index.scores("the of and"), [0.0]);
    }
}
