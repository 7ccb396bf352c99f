//! SessionStorage: the CAS port for the session envelope (design §4, wire facts §4).
