"""Domain services the handlers call: players, history and tanks, search, clans, online, the tracker."""
