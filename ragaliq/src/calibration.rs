//! Agreement with labelled claims (built in a later step).
