//! The options of `umcp bridge` alone: where it listens for hosts over HTTP, and who may
//! connect there.

/// `--listen`, `--token-file`, `--allow-origin` and `--allow-remote`.
#[derive(Default, Debug)]
pub struct Flags {
    /// `--listen ADDR`: serve Streamable HTTP there instead of stdio.
    pub listen: Option<String>,
    /// `--token-file FILE`: where the generated bearer token is written.
    pub token_file: Option<String>,
    /// `--allow-origin ORIGIN`: a web origin allowed beside the loopback ones.
    pub origins: Vec<String>,
    /// `--allow-remote`: listening on an address that is not loopback is allowed.
    pub remote: bool,
}

impl Flags {
    /// Stores option `name`, one of this struct's; false for any other.
    pub fn set(&mut self, name: &str, value: String) -> bool {
        match name {
            "listen" => self.listen = Some(value),
            "token-file" => self.token_file = Some(value),
            "allow-origin" => self.origins.push(value),
            "allow-remote" => self.remote = true,
            _ => return false,
        }
        true
    }

    /// The first of them given, for the error when another command has it.
    pub fn given(&self) -> Option<&'static str> {
        match self {
            Flags {
                listen: Some(_), ..
            } => Some("listen"),
            Flags {
                token_file: Some(_),
                ..
            } => Some("token-file"),
            Flags { origins, .. } if !origins.is_empty() => Some("allow-origin"),
            Flags { remote: true, .. } => Some("allow-remote"),
            _ => None,
        }
    }

    /// The HTTP options without `--listen`, which mean nothing then.
    pub fn without_listen(&self) -> Option<&'static str> {
        match self.listen {
            Some(_) => None,
            None => self.given(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_of_the_bridge_are_its_own() {
        let mut flags = Flags::default();
        assert!(!flags.set("timeout", "3".into()));
        assert_eq!(flags.given(), None);
        assert!(flags.set("allow-origin", "http://localhost:6274".into()));
        assert_eq!(flags.given(), Some("allow-origin"));
        assert_eq!(flags.without_listen(), Some("allow-origin"));
        assert!(flags.set("listen", "127.0.0.1:0".into()));
        assert_eq!(flags.without_listen(), None);
    }
}
