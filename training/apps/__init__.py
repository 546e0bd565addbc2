"""Playing with people: terminal play (:mod:`.play`), the browser app (:mod:`.serve`) and game
records (:mod:`.record`)."""
