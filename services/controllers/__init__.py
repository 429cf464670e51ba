"""HTTP controllers: thin, each turning a request into one service call and back."""
