//! The schema.org type hierarchy the router collects tools by: a query of type `Recipe` is
//! offered the tools of `Recipe`, `CreativeWork` and `Thing`.

use std::collections::HashMap;

/// The root of every type.
pub const THING: &str = "Thing";

/// The built-in part of schema.org: (type, parent).
const SCHEMA_ORG: &[(&str, &str)] = &[
    ("CreativeWork", THING),
    ("Recipe", "HowTo"),
    ("HowTo", "CreativeWork"),
    ("Movie", "CreativeWork"),
    ("Book", "CreativeWork"),
    ("Article", "CreativeWork"),
    ("NewsArticle", "Article"),
    ("BlogPosting", "Article"),
    ("Review", "CreativeWork"),
    ("MusicRecording", "CreativeWork"),
    ("MusicAlbum", "CreativeWork"),
    ("TVSeries", "CreativeWork"),
    ("Episode", "CreativeWork"),
    ("PodcastSeries", "CreativeWork"),
    ("PodcastEpisode", "Episode"),
    ("VideoGame", "CreativeWork"),
    ("SoftwareApplication", "CreativeWork"),
    ("Course", "CreativeWork"),
    ("Dataset", "CreativeWork"),
    ("WebPage", "CreativeWork"),
    ("Place", THING),
    ("LocalBusiness", "Place"),
    ("FoodEstablishment", "LocalBusiness"),
    ("Restaurant", "FoodEstablishment"),
    ("CafeOrCoffeeShop", "FoodEstablishment"),
    ("Store", "LocalBusiness"),
    ("LodgingBusiness", "LocalBusiness"),
    ("Hotel", "LodgingBusiness"),
    ("TouristAttraction", "Place"),
    ("Product", THING),
    ("Vehicle", "Product"),
    ("Event", THING),
    ("Organization", THING),
    ("Person", THING),
    ("Intangible", THING),
    ("Offer", "Intangible"),
    ("JobPosting", "Intangible"),
    ("Statistics", "Intangible"),
];

/// Types read as other types: NLWeb calls the root `Item`.
const ALIASES: &[(&str, &str)] = &[("Item", THING)];

/// Type -> parent, with `Thing` at the root. Unknown types fall back to `Thing`.
///
/// ```
/// use tool_router::TypeHierarchy;
///
/// let mut types = TypeHierarchy::schema_org();
/// assert_eq!(types.lineage("Recipe"), ["Recipe", "HowTo", "CreativeWork", "Thing"]);
/// assert_eq!(types.lineage("Spaceship"), ["Spaceship", "Thing"]);
/// types.add("Dessert", "Recipe");
/// assert_eq!(types.lineage("Dessert")[..2], ["Dessert", "Recipe"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeHierarchy {
    parents: HashMap<String, String>,
}

impl Default for TypeHierarchy {
    fn default() -> Self {
        TypeHierarchy::schema_org()
    }
}

impl TypeHierarchy {
    /// The built-in table: a small part of schema.org (Thing > CreativeWork > HowTo > Recipe,
    /// Movie, Book..., Thing > Place > LocalBusiness > FoodEstablishment > Restaurant, Thing >
    /// Product, Event, Organization, Person...).
    pub fn schema_org() -> Self {
        TypeHierarchy {
            parents: SCHEMA_ORG
                .iter()
                .map(|(child, parent)| ((*child).to_owned(), (*parent).to_owned()))
                .collect(),
        }
    }

    /// Only `Thing`: every type is a direct kind of it unless added.
    pub fn flat() -> Self {
        TypeHierarchy {
            parents: HashMap::new(),
        }
    }

    /// Adds a type, or moves one, under `parent`. A link that would make a cycle is ignored
    /// with a `tracing` warning.
    pub fn add(&mut self, child: impl Into<String>, parent: impl Into<String>) -> &mut Self {
        let child = canonical(&child.into()).to_owned();
        let parent = canonical(&parent.into()).to_owned();
        if child == THING || self.lineage(&parent).contains(&child) {
            tracing::warn!(%child, %parent, "ignoring a type link that would make a cycle");
            return self;
        }
        self.parents.insert(child, parent);
        self
    }

    /// The type's parent; `Thing` for an unknown type, `None` for `Thing`.
    pub fn parent(&self, schema_type: &str) -> Option<&str> {
        let schema_type = canonical(schema_type);
        if schema_type == THING {
            return None;
        }
        Some(self.parents.get(schema_type).map_or(THING, String::as_str))
    }

    /// Whether the type is in the table (`Thing` is).
    pub fn knows(&self, schema_type: &str) -> bool {
        let schema_type = canonical(schema_type);
        schema_type == THING || self.parents.contains_key(schema_type)
    }

    /// The type and its ancestors, most specific first, ending with `Thing`. A namespaced type
    /// (`{http://schema.org/}Recipe`, `schema:Recipe`, `https://schema.org/Recipe`) is read by
    /// its local name.
    pub fn lineage(&self, schema_type: &str) -> Vec<String> {
        let mut out = vec![canonical(local_name(schema_type)).to_owned()];
        while let Some(parent) = self.parent(out.last().map_or(THING, String::as_str)) {
            if out.iter().any(|t| t == parent) {
                break;
            }
            out.push(parent.to_owned());
        }
        out
    }
}

/// The name a type is stored under (`Item` is `Thing`).
pub(crate) fn canonical(schema_type: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == schema_type)
        .map_or(schema_type, |(_, name)| name)
}

/// `Recipe` of `{http://schema.org/}Recipe`, `schema:Recipe` or `https://schema.org/Recipe`.
fn local_name(schema_type: &str) -> &str {
    let name = schema_type.trim();
    let name = name.rsplit('}').next().unwrap_or(name);
    let name = name.rsplit('/').next().unwrap_or(name);
    name.rsplit(':').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restaurant_is_a_place_and_item_is_thing() {
        let types = TypeHierarchy::schema_org();
        assert_eq!(
            types.lineage("Restaurant"),
            [
                "Restaurant",
                "FoodEstablishment",
                "LocalBusiness",
                "Place",
                "Thing"
            ]
        );
        assert_eq!(types.lineage("Item"), ["Thing"]);
        assert_eq!(
            types.lineage("{http://schema.org/}Movie"),
            ["Movie", "CreativeWork", "Thing"]
        );
        assert_eq!(types.parent("Thing"), None);
        assert!(types.knows("Event"));
        assert!(!types.knows("Spaceship"));
    }

    #[test]
    fn a_link_that_would_make_a_cycle_is_ignored() {
        let mut types = TypeHierarchy::schema_org();
        types.add("CreativeWork", "Recipe");
        assert_eq!(
            types.lineage("Recipe"),
            ["Recipe", "HowTo", "CreativeWork", "Thing"]
        );
        types.add("Thing", "Recipe");
        assert_eq!(types.parent("Thing"), None);
    }
}
