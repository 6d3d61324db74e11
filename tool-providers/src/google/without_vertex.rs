//! Without the `vertex` feature no client can be made for Vertex AI: its endpoint is a type
//! with no value, so the clients' Vertex AI paths compile to nothing.

pub(crate) mod vertex {
    use reqwest::header::HeaderMap;
    use tool_model::ModelError;

    /// A Vertex AI endpoint, which cannot exist without the `vertex` feature.
    #[derive(Clone, Debug)]
    pub enum Vertex {}

    impl Vertex {
        pub fn given_base(&self) -> Option<&str> {
            match *self {}
        }

        pub fn set_base(&mut self, _: Option<String>) {
            match *self {}
        }

        pub fn is_express(&self) -> bool {
            match *self {}
        }

        pub fn location_url(&self, _: &str) -> String {
            match *self {}
        }

        pub fn root(&self) -> String {
            match *self {}
        }

        pub fn project_location(&self) -> String {
            match *self {}
        }

        pub async fn authorize(&self, _: &mut HeaderMap) -> Result<(), ModelError> {
            match *self {}
        }
    }
}
