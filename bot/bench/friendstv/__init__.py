"""FriendsTV (appendix D.1.2): pairs of FriendsQA questions about one scene, asked across an asymmetric pair."""
