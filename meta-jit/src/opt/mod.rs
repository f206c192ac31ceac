//! The optimizer (to come).
